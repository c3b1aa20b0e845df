--[[
  Ends decisions (apply-burst-3.lua makes them): the ones named (an owner
  lifts them), or every one whose time is up, each as lib/end-decision.lua
  tells, in one step, so the feed's `removed` names each once. A lifted
  issue's burst makes no new decision from attempts before the lift.

  KEYS[1] da    zset: active decision id -> until (ms)
  KEYS[2] dlog  the change log stream

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] now (ms)
  ARGV[3] 'expired' (the ones whose until <= now, at most 1,000 a call) or 'lift'
  ARGV[4..] with 'lift': the decision ids

  Returns the ids ended
]]
-- #include lib/end-decision.lua
local base = ARGV[1]
local ids
if ARGV[3] == 'expired' then
  ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, 1000)
else
  ids = {}
  for i = 4, #ARGV do
    if redis.call('ZSCORE', KEYS[1], ARGV[i]) then ids[#ids + 1] = ARGV[i] end
  end
end
for _, id in ipairs(ids) do
  local decision = endDecision(base, id, ARGV[3] == 'lift' and 'lifted' or 'expired', tonumber(ARGV[2]))
  if decision and ARGV[3] == 'lift' then redis.call('SET', base .. 'dlift:' .. decision.issue_id, ARGV[2]) end
end
return ids
