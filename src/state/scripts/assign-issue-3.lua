--[[
  Assigns an issue to a member of the organisation (by email), or to no one.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] issue id
  ARGV[3] the member's email, '' for no one
  ARGV[4] the issue.assigned trigger for the project's outbox (nq, as apply-events-4.lua records triggers), JSON;
          recorded only when the assignee changes

  Returns the email it was assigned to before ('' for no one), 0 no such issue in this project, -1 the state was
  not verified since this Redis started
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return -1 end
local key = ARGV[1] .. 'i:' .. ARGV[2]
if redis.call('EXISTS', key) == 0 then return 0 end
local was = redis.call('HGET', key, 'assignee') or ''
if was == ARGV[3] then return {was} end
redis.call('HSET', key, 'assignee', ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], redis.call('INCR', KEYS[2]))
redis.call('XADD', ARGV[1] .. 'nq', 'MAXLEN', '~', 10000, '*', 't', ARGV[4])
return {was}
