--[[
  Records a trigger of one channel's own rule (issue.frequency,
  release.crash_free) in the project's outbox, unless the rule fired for
  this subject within its interval: the mark and the outbox entry are
  written in one step, so a retry or two workers record it once.

  KEYS[1] the rule's mark for this subject and channel, '<prefix>:{p:<id>}:nr:<channel>:<subject>'
  KEYS[2] the project's outbox stream (nq)

  ARGV[1] how long the mark holds (ms)
  ARGV[2] the trigger, JSON

  Returns 1 recorded, 0 the mark holds
]]
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 10000, '*', 't', ARGV[2])
return 1
