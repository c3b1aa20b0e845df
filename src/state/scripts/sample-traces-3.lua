--[[
  Decides, for one project and one job, which transaction names are counted under their own group and which
  transactions are kept whole as samples (src/state/traces.state.ts):
  - a name is admitted while the project holds fewer than ARGV[3] names (one already held always is);
  - a transaction is a sample when it must be (it failed, or was drawn at random) or when it is among the
    ARGV[1] slowest of its group in the hour; a sample is kept while the project's bytes of samples today stay
    within ARGV[2].

  KEYS[1] the hour's slowest per group: '<prefix>:{p:<id>}:tslow:<hour>', field group -> durations, slowest first, comma-separated
  KEYS[2] the day's sample bytes: '<prefix>:{p:<id>}:tbytes:<day>'
  KEYS[3] the project's names: '<prefix>:{p:<id>}:tnames', a set

  ARGV[1] slowest kept per group and hour
  ARGV[2] sample bytes a day
  ARGV[3] most names
  ARGV[4] how many names follow (n)
  ARGV[5..4+n] the names
  ARGV[5+n..] group, duration (ms), bytes, must (1 or 0): one quadruple per transaction

  Returns {admitted, decisions}: per name 1 (admitted) or 0 (counted under the overflow name); per transaction
  0 (counted only), 1 (a sample), 2 (a sample the day's budget left out).
]]
local slowest, budget, maxNames, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local admitted = {}
for i = 5, 4 + n do
  local name = ARGV[i]
  if redis.call('SISMEMBER', KEYS[3], name) == 1 then
    admitted[#admitted + 1] = 1
  elseif redis.call('SCARD', KEYS[3]) < maxNames then
    redis.call('SADD', KEYS[3], name)
    admitted[#admitted + 1] = 1
  else
    admitted[#admitted + 1] = 0
  end
end
local decisions = {}
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
for i = 5 + n, #ARGV, 4 do
  local group, duration, bytes, must = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3] == '1'
  local list = {}
  local held = redis.call('HGET', KEYS[1], group)
  if held then
    for d in string.gmatch(held, '[^,]+') do list[#list + 1] = tonumber(d) end
  end
  local slow = #list < slowest or duration > list[#list]
  if slow then
    list[#list + 1] = duration
    table.sort(list, function(a, b) return a > b end)
    while #list > slowest do table.remove(list) end
    redis.call('HSET', KEYS[1], group, table.concat(list, ','))
  end
  if slow or must then
    if used + bytes > budget then
      decisions[#decisions + 1] = 2
    else
      used = used + bytes
      decisions[#decisions + 1] = 1
    end
  else
    decisions[#decisions + 1] = 0
  end
end
redis.call('SET', KEYS[2], used, 'PX', 172800000)
redis.call('PEXPIRE', KEYS[1], 7200000)
return {admitted, decisions}
