--[[
  Records one change of an incident (src/domain/incidents.ts: a monitor that failed or recovered) in its issue,
  created on first sight:
  - an occurrence (a failure) counts once by its id (ie:<issue>, score at) in the issue and its hour, follows the
    newest failure (culprit, last seen) and regresses a resolved issue or ends an ignore by the issue rule
    (lib/issue-rule.lua, as error events do);
  - a recovery resolves an unresolved issue, once by its id (the issue's `recovered` field); an issue already
    resolved, by hand or by an earlier recovery, is left alone and nobody is told.
  The change's notification (the incident opening or ending: ARGV[3]'s `trigger`) goes to the project's outbox (nq)
  in the same step, when the change was recorded now and the project has channels, so it is sent once.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] issue id (numbered for the fingerprint, perhaps not created yet)
  ARGV[3] JSON {kind, fingerprint, title, culprit, level, environment, change: 'occurred' | 'recovered', id, at (ms),
          trigger: {event, ...its own fields} or null}
  ARGV[4] 't' when the project's triggers go to its outbox, '' otherwise

  Returns {code, changes: JSON [[issue, 'regressed' | 'unignored', n, at (ms), '', regression kind], ...]}
    (as apply-events-4.lua's); code 1 changed, 0 applied before, -1 the state was not verified since this Redis started
]]
-- #include lib/epoch.lua
-- #include lib/issue-hours.lua
-- #include lib/issue-rule.lua
-- #include lib/issue-spread.lua
if not verifiedEpoch(KEYS[1]) then return {-1, '[]'} end
local base, issueId = ARGV[1], ARGV[2]
local c = cjson.decode(ARGV[3])
local key = base .. 'i:' .. issueId
local at = tonumber(c.at)

local function trigger()
  if ARGV[4] ~= 't' or c.trigger == cjson.null then return end
  local t = c.trigger
  t.issue, t.at, t.level = tonumber(issueId), at, c.level
  redis.call('XADD', base .. 'nq', 'MAXLEN', '~', 10000, '*', 't', cjson.encode(t))
end
local function dirty()
  redis.call('HSET', KEYS[3], issueId, redis.call('INCR', KEYS[2]))
end

if c.change == 'recovered' then
  -- an issue resolved (by hand, or never raised) is told of nothing: only an open incident recovers
  if redis.call('EXISTS', key) == 0 or redis.call('HGET', key, 'recovered') == c.id then return {0, '[]'} end
  redis.call('HSET', key, 'recovered', c.id)
  if redis.call('HGET', key, 'status') ~= 'unresolved' then return {0, '[]'} end
  redis.call('HSET', key, 'status', 'resolved', 'resolved_at', at, 'resolved_release', '', 'resolved_next', '')
  redis.call('HINCRBY', key, 'resolves', 1)
  trigger()
  dirty()
  return {1, '[]'}
end

if redis.call('EXISTS', key) == 0 then
  redis.call('HSET', key, 'kind', c.kind, 'fingerprint', c.fingerprint, 'title', c.title, 'culprit', c.culprit,
    'exception_type', '', 'level', c.level, 'status', 'unresolved', 'first', at, 'last', at, 'count', 0,
    'last_release', '', 'regressions', 0, 'resolves', 0, 'resolved_at', '', 'resolved_release', '', 'regressed_at', '',
    'regression_kind', '', 'created', at, 'latest', '', 'latest_at', '')
  redis.call('HSET', base .. 'fp', c.fingerprint, issueId)
end
if redis.call('ZADD', base .. 'ie:' .. issueId, 'NX', at, c.id) == 0 then return {0, '[]'} end
countHour(base, issueId, at)
local count = redis.call('HINCRBY', key, 'count', 1)
redis.call('HSET', key, 'title', c.title)
if at >= tonumber(redis.call('HGET', key, 'last')) then redis.call('HSET', key, 'last', at, 'culprit', c.culprit) end
if c.environment ~= cjson.null then spreadIssue(base, issueId, 'e', c.environment) end
local changes = {}
local change = issueOccurs(base, key, at, '', count)
if change and change[1] == 'regressed' then
  changes[1] = {tonumber(issueId), 'regressed', change[2], at, '', change[3]}
elseif change then
  changes[1] = {tonumber(issueId), 'unignored', count, at, '', ''}
end
trigger()
dirty()
return {1, #changes == 0 and '[]' or cjson.encode(changes)}
