--[[
  Ends one decision (end-decisions-2.lua: lifted or expired; set-issue-status-3.lua: its issue resolved or
  ignored), in the step that ends it: it leaves the active sets (da, dw) and its issue, goes to the change log
  as `d` with the decision as it was (`dc`: a bouncer's `deleted` names its address), and joins its issue's
  history
    dh:<issue>  list, newest first, of the issue's last 50 ended decisions: JSON, the decision with
                ended ('lifted', 'expired', 'resolved', 'ignored') and ended_at (ms)
  An expired decision ended when its time was up, not when it was noticed.
]]
local function endDecision(base, id, how, now)
  local stored = redis.call('GET', base .. 'dc:' .. id) or ''
  redis.call('ZREM', base .. 'da', id)
  redis.call('DEL', base .. 'dc:' .. id)
  redis.call('XADD', base .. 'dlog', 'MAXLEN', '~', 50000, '*', 'op', 'd', 'id', id, 'dc', stored)
  if stored == '' then return nil end
  local decision = cjson.decode(stored)
  if decision.w then redis.call('ZREM', base .. 'dw', decision.w) end
  if redis.call('GET', base .. 'di:' .. decision.issue_id) == id then redis.call('DEL', base .. 'di:' .. decision.issue_id) end
  decision.ended = how
  decision.ended_at = now
  if how == 'expired' then decision.ended_at = math.min(now, tonumber(decision['until'])) end
  local history = base .. 'dh:' .. decision.issue_id
  redis.call('LPUSH', history, cjson.encode(decision))
  redis.call('LTRIM', history, 0, 49)
  return decision
end
