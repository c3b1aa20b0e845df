--[[
  POST /api/v1/issues/<id>/status (spec 3.1, 4.8): sets an issue's status.
  A resolve records when and in which release (the issue's last release),
  and counts; a new event received later regresses it (apply-events-4.lua).
  Resolving or ignoring a security issue ends its decision (issue 24) in
  the same step (lib/end-decision.lua), and the issue's bursts before now
  make no new one.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] issue id
  ARGV[3] unresolved | resolved | ignored
  ARGV[4] now (ms)
  ARGV[5] a resolve: 'next' to resolve in the next release (an event regresses the issue only when its release is
          newer than the project's newest now, by first event: apply-events-4.lua); an ignore: 'count:<n>' until
          n more events, 'until:<ms>' until that time, '' for good

  Returns 1 set, 0 no such issue in this project, -1 the state was not verified since this Redis started
]]
-- #include lib/epoch.lua
-- #include lib/end-decision.lua
if not verifiedEpoch(KEYS[1]) then return -1 end
local key = ARGV[1] .. 'i:' .. ARGV[2]
if redis.call('EXISTS', key) == 0 then return 0 end
local mode = ARGV[5] or ''
redis.call('HSET', key, 'status', ARGV[3], 'resolved_next', '', 'ignore_count', '', 'ignore_until', '')
if ARGV[3] == 'resolved' then
  local release = redis.call('HGET', key, 'last_release')
  if mode == 'next' then
    release = redis.call('ZREVRANGE', ARGV[1] .. 'rf', 0, 0)[1] or ''
    redis.call('HSET', key, 'resolved_next', '1')
  end
  redis.call('HSET', key, 'resolved_at', ARGV[4], 'resolved_release', release)
  redis.call('HINCRBY', key, 'resolves', 1)
elseif ARGV[3] == 'ignored' then
  local what, n = string.match(mode, '^(%a+):(%d+)$')
  if what == 'count' then redis.call('HSET', key, 'ignore_count', tonumber(redis.call('HGET', key, 'count')) + tonumber(n)) end
  if what == 'until' then redis.call('HSET', key, 'ignore_until', n) end
end
redis.call('HSET', KEYS[3], ARGV[2], redis.call('INCR', KEYS[2]))
local decision = redis.call('GET', ARGV[1] .. 'di:' .. ARGV[2])
if ARGV[3] ~= 'unresolved' and decision then
  endDecision(ARGV[1], decision, ARGV[3], tonumber(ARGV[4]))
  redis.call('DEL', ARGV[1] .. 'di:' .. ARGV[2])
  redis.call('SET', ARGV[1] .. 'dlift:' .. ARGV[2], ARGV[4])
end
return 1
