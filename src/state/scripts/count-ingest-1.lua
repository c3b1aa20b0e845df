--[[
  Adds one process' ingestion counts of an hour to a project's hash
  (src/state/ingest-stats.ts), with a cap on its fields: item types and
  client-report reasons are client text, so a field new to a hash that
  already holds ARGV[2] fields counts under the overflow field instead.

  KEYS[1] the hour's hash: '<prefix>:{p:<id>}:ing:<hour>', field JSON [outcome, type, reason] -> count

  ARGV[1] how long the hash is kept (ms)
  ARGV[2] most fields it holds
  ARGV[3] the overflow field
  ARGV[4..] field, count, field, count, ...

  Returns the number of fields counted under the overflow field.
]]
local max, overflow, spilled = tonumber(ARGV[2]), ARGV[3], 0
for i = 4, #ARGV, 2 do
  local field = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], field) == 0 and redis.call('HLEN', KEYS[1]) >= max then
    field = overflow
    spilled = spilled + 1
  end
  redis.call('HINCRBY', KEYS[1], field, ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return spilled
