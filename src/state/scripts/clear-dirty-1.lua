--[[
  Marks rollups flushed: each is taken off the dirty hash only if it has not
  changed since the snapshot the flusher wrote, so a change made during the
  flush is flushed next time.

  KEYS[1] dirty   hash: rollup key (without prefix) -> seq of its last change

  ARGV    pairs of rollup key and the version the flusher wrote

  Returns the number of rollups taken off.
]]
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
