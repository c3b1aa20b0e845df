--[[
  What the flusher copies to MongoDB: every rollup of one project changed since
  it was last flushed, read in one atomic step together with the project's seq.

  KEYS[1] epoch   run_id of the Redis this project's state was verified on
  KEYS[2] seq     the project's change counter
  KEYS[3] dirty   hash: rollup key (without prefix) -> seq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'

  Returns {verified, seq, {key, version, {field, value, ...}}, ...}
    verified 0: the state was not verified since this Redis started; flush nothing
    a rollup that expired meanwhile comes with an empty field list
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return {0, 0} end
local out = {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
local dirty = redis.call('HGETALL', KEYS[3])
for i = 1, #dirty, 2 do
  out[#out + 1] = {dirty[i], dirty[i + 1], redis.call('HGETALL', ARGV[1] .. dirty[i])}
end
return out
