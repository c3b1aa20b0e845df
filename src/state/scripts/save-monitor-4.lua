--[[
  Saves a monitor environment's state (src/domain/monitor-state.ts) unless it
  changed since it was read, and records what was applied in the same step:
  a check-in by its stored id, or the clock's minute. So each check-in and
  each minute moves a monitor once, whichever worker applies it and however
  often its job runs. The state carries its outbox (what the move changed
  beyond it: check-in records, incident effects) until they are delivered;
  a state with an outbox is listed in monout, for the clock to deliver what
  a worker that died left behind.

  KEYS[1] mon      hash: '<slug>\n<environment>' -> the state's JSON ({v, t, s, o})
  KEYS[2] mondue   zset: '<slug>\n<environment>' -> when the clock must look at it (ms)
  KEYS[3] monseen  zset: stored check-in id -> when applied (ms), trimmed to ARGV[7]
  KEYS[4] monout   zset: '<slug>\n<environment>' -> when its outbox was last added to (ms)

  ARGV[1] the field
  ARGV[2] the version read (0: none)
  ARGV[3] the new state's JSON, its version ARGV[2] + 1
  ARGV[4] when it is due ('' for never)
  ARGV[5] the stored check-in id applied ('' for a minute of the clock, or an outbox delivered)
  ARGV[6] now (ms)
  ARGV[7] check-in ids older than this (ms) are forgotten
  ARGV[8] 'o' when the new state's outbox holds something, '' when it is empty

  Returns 1 saved, 0 the state moved since it was read (read again), 2 applied before (nothing changed)
]]
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local version = 0
if stored then version = cjson.decode(stored).v end
if ARGV[5] ~= '' and redis.call('ZSCORE', KEYS[3], ARGV[5]) then return 2 end
if tostring(version) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '' then redis.call('ZREM', KEYS[2], ARGV[1]) else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[7])
end
if ARGV[8] == 'o' then redis.call('ZADD', KEYS[4], 'GT', ARGV[6], ARGV[1]) else redis.call('ZREM', KEYS[4], ARGV[1]) end
return 1
