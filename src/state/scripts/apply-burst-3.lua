--[[
  Records one burst found by a detector (src/domain/bursts.ts) in its
  security issue, created on first sight. The detectors recompute bursts
  from the attempts they read, so a burst only ever grows: counts take the
  larger value, first and last seen widen. A burst holding an attempt of the
  batch being applied is an occurrence of the issue rule (lib/issue-rule.lua,
  as error events are): it regresses a resolved issue and ends an ignore that
  it reaches. Applying the same burst again changes nothing. When the project has notification channels,
  the decision made (decision.created: its type, address or actor, end and escalation),
  the issue's creation (security.burst, naming the actor, the address and
  the attempts) and a regression (issue.regressed) go to its outbox (nq) in
  the same step, so each is recorded once.

  A burst that raises or extends the issue also makes or extends its
  decision (issue 24) in the same step, unless decisions are off for the
  project (ARGV[5] = 0), the issue is not unresolved, or the issue's
  decision was lifted (by hand, a resolve or an ignore) and the burst holds
  no attempt received since:
    dc:<id>    the decision, JSON {id, kind, type, escalation, actor, ip, issue_id, created_at, until, and once a
               later burst extended it, extended_at and extensions} (ms); lib/end-decision.lua ends it
    da         zset: active decision id -> until (ms)
    dw         zset: the same decisions as a bouncer's list names them, '<id>|<kind>|<type>|<i: address or range,
               a: actor>|<value>' -> until (ms), the member kept in the decision as `w` (src/services/bouncer-startup.ts)
    di:<issue> the issue's active decision id; dlift:<issue> when its last decision was lifted (ms)
    dseq       the project's decision counter; dlog the change log, a stream of {op: s (set) | d (ended), id}

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] issue id (numbered for the burst's fingerprint, perhaps not created yet)
  ARGV[3] JSON {fingerprint, title, detector, group, first_id, last_id, actor, ip, count, first, last, latest,
          latest_at, received, policy}
          `policy`: why the burst makes no decision ('allowlisted', 'monitoring'; '' none), kept on the issue
          `group` the digest of the detector's group (actor and address, or address); `first_id` and `last_id` the
          event ids of the burst's earliest and newest attempts; `received` (ms) is set when the burst holds an
          attempt of the batch being applied
  ARGV[4] 't' when the project's triggers go to its outbox, '' otherwise
  ARGV[5] how long a decision holds (s); 0: decisions are off
  ARGV[6] now (ms)
  ARGV[7] how long a burst's span is kept in its group's index (ms): by wall time since the group's last burst,
          and by the attempts' time before a new burst's first
  ARGV[9] JSON {type, escalate, max_ms}: the decision's type (ban, captcha); with escalate, a decision made for an
          address that had one within the last 24 hours (dip:<address>, counted) holds twice as long for each, up to
          max_ms, and the decision says how far it escalated
  ARGV[8] JSON [[event id, at (ms), actor, address], ...]: the attempts this fold added to the burst. Each joins the
          issue's attempts (ie:, score at), its hourly counts (ih:) and its spread of actors and addresses
          (is: 'a:<actor>', 'i:<address>') once, whichever fold or retry brings it again

  One attack seen by two folds: a burst's identity is its earliest attempt, and a fold that ran before an older
  attempt of the same attack was applied (workers apply jobs side by side) names it by a later one. So each
  detector group keeps the spans of its issues (bx:<detector>:<group>: issue id -> JSON [first at, first id, last
  at, last id]), and a burst of an issue not created yet whose span overlaps one of them, in (time, event id) order,
  is recorded in that issue, its fingerprint mapped there too. The detectors' bursts of one group never overlap, so
  only views of the same attack meet.

  Returns {code, changes: JSON [[issue, 'regressed' | 'unignored', n, at (ms), '', regression kind], ...]}
    (as apply-events-4.lua's); code 1 changed, 0 unchanged, -1 the state was not verified since this Redis started
]]
-- #include lib/epoch.lua
-- #include lib/issue-hours.lua
-- #include lib/issue-rule.lua
if not verifiedEpoch(KEYS[1]) then return {-1, '[]'} end
local base = ARGV[1]
local b = cjson.decode(ARGV[3])
local issueId = ARGV[2]
local now = tonumber(ARGV[6] or '0')
local keepMs = tonumber(ARGV[7])
local index = base .. 'bx:' .. b.detector .. ':' .. b.group

-- Whether position (at1, id1) comes no later than (at2, id2).
local function noLater(at1, id1, at2, id2)
  return at1 < at2 or (at1 == at2 and id1 <= id2)
end

local created = redis.call('EXISTS', base .. 'i:' .. issueId) == 1
if not created then
  local spans = redis.call('HGETALL', index)
  for i = 1, #spans, 2 do
    local other, span = spans[i], cjson.decode(spans[i + 1])
    -- a span that ended long before this burst began is of an earlier attack: no fold reaches that far back
    if span[3] < b.first - keepMs or redis.call('EXISTS', base .. 'i:' .. other) == 0 then
      redis.call('HDEL', index, other)
    elseif noLater(b.first, b.first_id, span[3], span[4]) and noLater(span[1], span[2], b.latest_at, b.last_id) then
      issueId, created = other, true
      redis.call('HSET', base .. 'fp', b.fingerprint, other)
      break
    end
  end
end

-- The issue's span in its group's index, widened to the burst's.
local stored = redis.call('HGET', index, issueId)
local span = stored and cjson.decode(stored) or {b.first, b.first_id, b.latest_at, b.last_id}
local wider = not stored
if not noLater(span[1], span[2], b.first, b.first_id) then span[1], span[2], wider = b.first, b.first_id, true end
if not noLater(b.latest_at, b.last_id, span[3], span[4]) then span[3], span[4], wider = b.latest_at, b.last_id, true end
if wider then
  redis.call('HSET', index, issueId, cjson.encode(span))
  redis.call('PEXPIRE', index, keepMs)
end

local key = base .. 'i:' .. issueId
local changed = false
local function trigger(t)
  if ARGV[4] == 't' then redis.call('XADD', base .. 'nq', 'MAXLEN', '~', 10000, '*', 't', cjson.encode(t)) end
end
if not created then
  redis.call('HSET', key, 'kind', 'security', 'fingerprint', b.fingerprint, 'title', b.title, 'exception_type', b.detector,
    'level', 'warning', 'status', 'unresolved', 'first', b.first, 'last', b.last, 'count', 0, 'last_release', '',
    'regressions', 0, 'resolves', 0, 'resolved_at', '', 'resolved_release', '', 'regressed_at', '',
    'regression_kind', '', 'created', b.received or b.last, 'latest', b.latest, 'latest_at', b.latest_at)
  changed = true
  trigger({event = 'security.burst', issue = tonumber(issueId), at = b.received or b.last, level = 'warning',
    detector = b.detector, actor = b.actor, ip = b.ip, attempts = b.count})
end
for _, attempt in ipairs(cjson.decode(ARGV[8] or '[]')) do
  local eventId, at, actor, ip = attempt[1], attempt[2], attempt[3], attempt[4]
  if redis.call('ZADD', base .. 'ie:' .. issueId, 'NX', at, eventId) == 1 then
    countHour(base, issueId, at)
    if actor ~= '' then redis.call('HINCRBY', base .. 'is:' .. issueId, 'a:' .. actor, 1) end
    if ip ~= '' then redis.call('HINCRBY', base .. 'is:' .. issueId, 'i:' .. ip, 1) end
  end
end
local issue = redis.call('HMGET', key, 'count', 'first', 'last', 'latest_at')
local count = math.max(b.count, tonumber(issue[1]))
if count > tonumber(issue[1]) then redis.call('HSET', key, 'count', count); changed = true end
if tonumber(b.first) < tonumber(issue[2]) then redis.call('HSET', key, 'first', b.first); changed = true end
if tonumber(b.last) > tonumber(issue[3]) then redis.call('HSET', key, 'last', b.last); changed = true end
if tonumber(b.latest_at) > tonumber(issue[4]) then redis.call('HSET', key, 'latest', b.latest, 'latest_at', b.latest_at); changed = true end
local changes = {}
local change = b.received and issueOccurs(base, key, tonumber(b.received), '', count)
if change and change[1] == 'regressed' then
  changes[1] = {tonumber(issueId), 'regressed', change[2], tonumber(b.received), '', change[3]}
  trigger({event = 'issue.regressed', issue = tonumber(issueId), at = b.received, level = 'warning',
    regression_kind = change[3], detector = b.detector, actor = b.actor, ip = b.ip, attempts = b.count})
elseif change then
  changes[1] = {tonumber(issueId), 'unignored', count, tonumber(b.received), '', ''}
end
if change then changed = true end
if (redis.call('HGET', key, 'policy') or '') ~= (b.policy or '') then redis.call('HSET', key, 'policy', b.policy or ''); changed = true end
-- cjson writes an empty table as {}
local answer = #changes == 0 and '[]' or cjson.encode(changes)
if not changed then return {0, answer} end
redis.call('HSET', KEYS[3], issueId, redis.call('INCR', KEYS[2]))

local holdFor = tonumber(ARGV[5] or '0')
local lifted = tonumber(redis.call('GET', base .. 'dlift:' .. issueId) or '-1')
local fresh = lifted < 0 or (b.received and tonumber(b.received) > lifted)
if holdFor > 0 and redis.call('HGET', key, 'status') == 'unresolved' and fresh then
  local ends = now + holdFor * 1000
  local id = redis.call('GET', base .. 'di:' .. issueId)
  local decision
  local policy = cjson.decode(ARGV[9] or '{}')
  local maxMs = tonumber(policy.max_ms or 0)
  -- how long a decision escalated `level` times holds: twice as long for each, up to the cap
  local function holding(level)
    local ms = holdFor * 1000 * (2 ^ level)
    if maxMs > 0 and ms > maxMs then ms = math.max(maxMs, holdFor * 1000) end
    return ms
  end
  if id and redis.call('ZSCORE', base .. 'da', id) then
    decision = cjson.decode(redis.call('GET', base .. 'dc:' .. id))
    ends = now + holding(decision.escalation or 0)
    decision['until'] = ends
    decision.extended_at = now
    decision.extensions = (decision.extensions or 0) + 1
  else
    id = 'd' .. redis.call('INCR', base .. 'dseq')
    local kind = 'brute_force'
    if b.detector == 'credential_stuffing' then kind = 'credential_stuffing' end
    -- every decision on an address is counted for a day (dip:), so escalation turned on counts the ones made before
    local level = 0
    if type(b.ip) == 'string' then
      local seen = base .. 'dip:' .. b.ip
      local before = tonumber(redis.call('GET', seen) or '0')
      redis.call('SET', seen, before + 1, 'PX', 86400000)
      if policy.escalate then level = before end
    end
    ends = now + holding(level)
    decision = {id = id, kind = kind, type = policy.type or 'ban', escalation = level, actor = b.actor, ip = b.ip,
      issue_id = issueId, created_at = now, ['until'] = ends}
    -- as a bouncer's list names it (dw): an address (or range), else the actor
    if type(b.ip) == 'string' then decision.w = id .. '|' .. kind .. '|' .. decision.type .. '|i|' .. b.ip
    else decision.w = id .. '|' .. kind .. '|' .. decision.type .. '|a|' .. tostring(b.actor) end
    redis.call('SET', base .. 'di:' .. issueId, id)
    trigger({event = 'decision.created', issue = tonumber(issueId), at = now, level = 'warning', decision = id,
      detector = b.detector, type = decision.type, actor = b.actor, ip = b.ip, escalation = level, ['until'] = ends})
  end
  redis.call('SET', base .. 'dc:' .. id, cjson.encode(decision))
  redis.call('ZADD', base .. 'da', ends, id)
  if decision.w then redis.call('ZADD', base .. 'dw', ends, decision.w) end
  redis.call('XADD', base .. 'dlog', 'MAXLEN', '~', 50000, '*', 'op', 's', 'id', id)
end
return {1, answer}
