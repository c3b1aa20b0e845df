--[[
  Records one burst found by a detector (src/domain/bursts.ts) in its
  security issue, created on first sight. The detectors recompute bursts
  from the attempts they read, so a burst only ever grows: counts take the
  larger value, first and last seen widen. An attempt of the burst received
  after the issue was resolved regresses it (spec 3.1). Applying the same
  burst again changes nothing. When the project has notification channels,
  the issue's creation (security.burst, naming the actor, the address and
  the attempts) and a regression (issue.regressed) go to its outbox (nq) in
  the same step, so each is recorded once.

  A burst that raises or extends the issue also makes or extends its
  decision (issue 24) in the same step, unless decisions are off for the
  project (ARGV[5] = 0), the issue is not unresolved, or the issue's
  decision was lifted (by hand, a resolve or an ignore) and the burst holds
  no attempt received since:
    dc:<id>    the decision, JSON {id, kind, actor, ip, issue_id, created_at, until} (ms)
    da         zset: active decision id -> until (ms)
    di:<issue> the issue's active decision id; dlift:<issue> when its last decision was lifted (ms)
    dseq       the project's decision counter; dlog the change log, a stream of {op: s (set) | d (ended), id}

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] issue id
  ARGV[3] JSON {fingerprint, title, detector, actor, ip, count, first, last, latest, latest_at, received}
          `received` (ms) is set when the burst holds an attempt of the batch being applied
  ARGV[4] 't' when the project's triggers go to its outbox, '' otherwise
  ARGV[5] how long a decision holds (s); 0: decisions are off
  ARGV[6] now (ms)

  Returns 1 changed, 0 unchanged, -1 the state was not verified since this Redis started
]]
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
if redis.call('GET', KEYS[1]) ~= runId then return -1 end
local base = ARGV[1]
local b = cjson.decode(ARGV[3])
local key = base .. 'i:' .. ARGV[2]
local changed = false
local function trigger(t)
  if ARGV[4] == 't' then redis.call('XADD', base .. 'nq', 'MAXLEN', '~', 10000, '*', 't', cjson.encode(t)) end
end
if redis.call('EXISTS', key) == 0 then
  redis.call('HSET', key, 'kind', 'security', 'fingerprint', b.fingerprint, 'title', b.title, 'exception_type', b.detector,
    'level', 'warning', 'status', 'unresolved', 'first', b.first, 'last', b.last, 'count', 0, 'last_release', '',
    'regressions', 0, 'resolves', 0, 'resolved_at', '', 'resolved_release', '', 'regressed_at', '',
    'regression_kind', '', 'created', b.received or b.last, 'latest', b.latest, 'latest_at', b.latest_at)
  changed = true
  trigger({event = 'security.burst', issue = tonumber(ARGV[2]), at = b.received or b.last, level = 'warning',
    detector = b.detector, actor = b.actor, ip = b.ip, attempts = b.count})
end
local issue = redis.call('HMGET', key, 'count', 'first', 'last', 'latest_at', 'status', 'resolved_at')
if b.count > tonumber(issue[1]) then redis.call('HSET', key, 'count', b.count); changed = true end
if tonumber(b.first) < tonumber(issue[2]) then redis.call('HSET', key, 'first', b.first); changed = true end
if tonumber(b.last) > tonumber(issue[3]) then redis.call('HSET', key, 'last', b.last); changed = true end
if tonumber(b.latest_at) > tonumber(issue[4]) then redis.call('HSET', key, 'latest', b.latest, 'latest_at', b.latest_at); changed = true end
if b.received and issue[5] == 'resolved' and tonumber(issue[6]) < tonumber(b.received) then
  redis.call('HSET', key, 'status', 'unresolved', 'regressed_at', b.received, 'regression_kind', 'new_release')
  redis.call('HINCRBY', key, 'regressions', 1)
  changed = true
  trigger({event = 'issue.regressed', issue = tonumber(ARGV[2]), at = b.received, level = 'warning',
    regression_kind = 'new_release', detector = b.detector, actor = b.actor, ip = b.ip, attempts = b.count})
end
if not changed then return 0 end
redis.call('HSET', KEYS[3], ARGV[2], redis.call('INCR', KEYS[2]))

local holdFor, now = tonumber(ARGV[5] or '0'), tonumber(ARGV[6] or '0')
local lifted = tonumber(redis.call('GET', base .. 'dlift:' .. ARGV[2]) or '-1')
local fresh = lifted < 0 or (b.received and tonumber(b.received) > lifted)
if holdFor > 0 and redis.call('HGET', key, 'status') == 'unresolved' and fresh then
  local ends = now + holdFor * 1000
  local id = redis.call('GET', base .. 'di:' .. ARGV[2])
  local decision
  if id and redis.call('ZSCORE', base .. 'da', id) then
    decision = cjson.decode(redis.call('GET', base .. 'dc:' .. id))
    decision['until'] = ends
  else
    id = 'd' .. redis.call('INCR', base .. 'dseq')
    local kind = 'brute_force'
    if b.detector == 'credential_stuffing' then kind = 'credential_stuffing' end
    decision = {id = id, kind = kind, actor = b.actor, ip = b.ip, issue_id = ARGV[2], created_at = now, ['until'] = ends}
    redis.call('SET', base .. 'di:' .. ARGV[2], id)
  end
  redis.call('SET', base .. 'dc:' .. id, cjson.encode(decision))
  redis.call('ZADD', base .. 'da', ends, id)
  redis.call('XADD', base .. 'dlog', 'MAXLEN', '~', 50000, '*', 'op', 's', 'id', id)
end
return 1
