--[[
  Raises a counter to at least a value (never lowers it): after a Redis
  restart the shared issue id counter must not fall below the highest issue
  id MongoDB holds.

  KEYS[1] the counter
  ARGV[1] the value it must at least have

  Returns the counter's value.
]]
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return current
