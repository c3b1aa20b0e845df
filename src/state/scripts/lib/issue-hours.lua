-- Counts an event in its issue's hour (ih:<issue>, hour = ms / 3600000); when a new hour makes the hash longer than
-- kept (15 days), the oldest hours go. `base` is the project's key prefix.
local HOURS_KEPT = 15 * 24
local function countHour(base, id, at)
  local key = base .. 'ih:' .. id
  local hour = math.floor(tonumber(at) / 3600000)
  if redis.call('HINCRBY', key, hour, 1) == 1 and redis.call('HLEN', key) > HOURS_KEPT then
    local hours = redis.call('HKEYS', key)
    table.sort(hours, function(a, b) return tonumber(a) > tonumber(b) end)
    for i = HOURS_KEPT + 1, #hours do redis.call('HDEL', key, hours[i]) end
  end
end
