--[[
  Applies one project's part of the event groups of a job to its hot state,
  each group once: a group's id is recorded in the same atomic step as its
  effects, so a retry, a duplicate delivery, two workers on one group or a
  group delivered again in another job change nothing twice.
  - an error event counts in its issue (created on first sight), follows the
    newest event (last release, level, title, culprit, latest event), adds its
    company tag (up to 64), and regresses a resolved issue or ends an ignore by
    the issue rule (lib/issue-rule.lua, spec 3.1); it joins
    the issue's events (ie:), its spread (is:, and the filter sets fr:, fe:,
    fc: on the first event of a release, environment or company) and its
    hourly counts (ih:, trimmed to HOURS_KEPT);
  - a sign-in attempt joins its (actor, ip) group's and its ip's attempts
    (and an IPv6 address's /64's), sorted sets trimmed to the detectors' look-back, which the worker hands
    to the pure detectors (src/domain/bursts.ts).
  When the project has notification channels, the same step records what
  they are told of (src/notify/): a new issue (issue.created) and a
  regression (issue.regressed) go to the project's outbox (nq), and each
  event counts in its issue's minute of receipt (im:, the last hour kept)
  for the frequency rules. A group applied before records nothing, so a
  trigger is recorded once.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] eapplied zset: group id -> received (ms), trimmed to ARGV[2]
  KEYS[4] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] how long applied group ids are remembered (ms)
  ARGV[3] look-back of the detectors (ms) and most attempts kept per group
  ARGV[4] JSON [{id: group id, at: when it was received (ms),
                 e: [{event, issue, at, release, level, title, exception_type, company, fingerprint, culprit,
                      environment, kind: the issue's ('error', or 'security' for a CSP violation's),
                      user: '' for none, else its keys joined by '\n': 'k:<key>' the one users are counted by,
                      'i:<id>', 'm:<email>'; tags: a list of '<key>=<value>'}, ...],
                 a: [{at, sets: [[set, member], ...]}, ...] (an attempt's sorted sets and its members there,
                     made by src/state/bursts.state.ts: its group's, and its address's when it has one),
                 p: when the group's id was made (ms), if it stored sign-in attempts of the project}, ...]
          times in ms as decimal strings; '' for a missing release, company, environment
  ARGV[5] what notifications need: '' nothing, 't' triggers, 'tf' triggers and minute counts

  Keys under the prefix:
    i:<issue>    the issue: kind, fingerprint, title, culprit, exception_type, level, status, first, last,
                 count, first_release, last_release, regressions, resolves, resolved_at, resolved_release,
                 resolved_next ('1': resolved in the next release), ignore_count, ignore_until (an ignore that
                 ends at that many events, or at that time in ms), regressed_at, regression_kind,
                 regressed_release, created, latest, latest_at (set-issue-status-3.lua: assignee)
    ic:<issue>   its company tags
    ie:<issue>   its events: score at, member event_id
    is:<issue>   its spread: 'r:<release>', 'e:<environment>', 'c:<company>', 'v:<release>\n<environment>',
                 't:<tag key>=<value>' -> events (the value is everything after the two characters:
                 src/domain/client-keys.ts' spreadField); at most MAX_SPREAD fields, the events of a tag value
                 past them counted in 'o:tags'
    iu:<issue>   its users, a HyperLogLog of their keys
    rf           the project's releases: score the time of the first event of each (ms)
    ih:<issue>   its events per hour: hour (ms / 3600000) -> events
    im:<issue>   its events per minute of receipt: minute (ms / 60000) -> events (with 'f')
    fb:<issue>   its user feedback (link-feedback-1.lua); fbw:<event id> feedback waiting for the event, linked here
    nq           the notification outbox: a stream of {t: JSON trigger} (with 't')
    fr:<release>, fe:<environment>, fc:<company>, fv:<release>\n<environment>, ft:<key>=<value>  the error
                 issues with an event of it (the value as sent)
    fu:<user key> ('i:<id>', 'm:<email>'), fx:user  the issues with an event of that user, of any user (and
                 out of snapshot-issues-3.lua's fx:nouser)
    xn:<status>  how many issues of the status each filter set holds (snapshot-issues-3.lua)
    ag:<group>   attempts of an (actor, ip) group, keyed by a hash of both: score at, member '<event id>|<kind: f or s>'
                 (the id in base64url)
    aip:<ip>     attempts from an ip: the same, member '<event id>|<kind>|<actor>' (the actor everything after the
                 second '|': src/domain/client-keys.ts' attemptMember)
    a64:<prefix> attempts from an IPv6 /64 ('2001:db8:1:2::/64'): member '<event id>|<kind>|<ip>|<actor>'
    dt:<ag, aip or a64 key>  a burst detector's saved fold (read-detector-3.lua): deleted when an attempt
                 no newer than its newest arrives
    rp           groups whose sign-in attempts the repacker has yet to rewrite: score the group id's time (ms)
                 (src/services/repack.service.ts)

  Returns {code, errors applied, attempts recorded, changes: JSON [[issue, 'regressed' | 'unignored', n, at (ms),
          release, regression kind], ...]} (n: the issue's regressions after this one, or its event count)
    code 1 some group applied, 0 every group applied before, -1 the state was not verified since this Redis started
]]
-- #include lib/epoch.lua
-- #include lib/issue-hours.lua
-- #include lib/issue-spread.lua
-- #include lib/issue-rule.lua
if not verifiedEpoch(KEYS[1]) then return {-1, 0, 0, '[]'} end

local base = ARGV[1]
local function spread(id, dim, value) spreadIssue(base, id, dim, value) end

-- Feedback that arrived before its event (link-feedback-1.lua) joins the event's issue now.
local function linkWaiting(id, eventId)
  local waiting = base .. 'fbw:' .. eventId
  if redis.call('EXISTS', waiting) == 0 then return end
  for _, member in ipairs(redis.call('SMEMBERS', waiting)) do
    local ms, feedback = string.match(member, '^(%d+):(.*)$')
    redis.call('ZADD', base .. 'fb:' .. id, ms, feedback)
  end
  redis.call('DEL', waiting)
end

-- Records a trigger in the outbox for the worker's dispatcher; at most ~10,000 wait.
local notify = ARGV[5] or ''
local function trigger(t)
  if string.find(notify, 't', 1, true) then
    redis.call('XADD', base .. 'nq', 'MAXLEN', '~', 10000, '*', 't', cjson.encode(t))
  end
end

-- Counts an event in its issue's minute of receipt; the oldest minutes go past an hour.
local function minutely(id, now)
  if not string.find(notify, 'f', 1, true) then return end
  local key = base .. 'im:' .. id
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', key, minute, 1) == 1 then
    for _, m in ipairs(redis.call('HKEYS', key)) do
      if tonumber(m) <= minute - 60 then redis.call('HDEL', key, m) end
    end
    redis.call('PEXPIRE', key, 3600000)
  end
end
local lookback, maxAttempts = string.match(ARGV[3], '^(%d+):(%d+)$')
lookback, maxAttempts = tonumber(lookback), tonumber(maxAttempts)
local groups = cjson.decode(ARGV[4])
local seq = nil
local errors, attempts, newest = 0, 0, 0
local changes = {}

-- The event's user: counted in the issue's users, and the issue joins each of the user's filter sets.
local function countUser(id, user)
  if user == '' then return end
  for part in string.gmatch(user, '[^\n]+') do
    if string.sub(part, 1, 2) == 'k:' then redis.call('PFADD', base .. 'iu:' .. id, string.sub(part, 3))
    else redis.call('SADD', base .. 'fu:' .. part, id) end
  end
  redis.call('SADD', base .. 'fx:user', id)
  redis.call('SREM', base .. 'fx:nouser', id)
end

for _, g in ipairs(groups) do
  if not redis.call('ZSCORE', KEYS[3], g.id) then
    local now = tonumber(g.at)
    if now > newest then newest = now end
    if not seq then seq = redis.call('INCR', KEYS[2]) end
    redis.call('ZADD', KEYS[3], now, g.id)
    if g.p then redis.call('ZADD', base .. 'rp', g.p, g.id) end

    for _, e in ipairs(g.e) do
      local event, id, at, release, level, title = e.event, e.issue, e.at, e.release, e.level, e.title
      local etype, company, fingerprint, culprit, environment = e.exception_type, e.company, e.fingerprint, e.culprit, e.environment
      local kind, user, tags = e.kind, e.user, e.tags
      local key = base .. 'i:' .. id
      local created = redis.call('EXISTS', key) == 0
      if release ~= '' then redis.call('ZADD', base .. 'rf', 'LT', tonumber(at), release) end
      if created then
        redis.call('HSET', key, 'kind', kind or 'error', 'fingerprint', fingerprint, 'title', title, 'culprit', culprit, 'exception_type', etype,
          'level', level, 'status', 'unresolved', 'first', at, 'last', at, 'count', 0, 'first_release', release, 'last_release', release,
          'regressions', 0, 'resolves', 0, 'resolved_at', '', 'resolved_release', '', 'regressed_at', '',
          'regression_kind', '', 'created', now, 'latest', event, 'latest_at', at)
      end
      local issue = redis.call('HMGET', key, 'first', 'last')
      local count = redis.call('HINCRBY', key, 'count', 1)
      if tonumber(at) < tonumber(issue[1]) then redis.call('HSET', key, 'first', at, 'first_release', release) end
      if tonumber(at) >= tonumber(issue[2]) then
        redis.call('HSET', key, 'last', at, 'last_release', release, 'level', level, 'title', title, 'culprit', culprit, 'latest', event, 'latest_at', at)
      end
      if company ~= '' and redis.call('SCARD', base .. 'ic:' .. id) < 64 then redis.call('SADD', base .. 'ic:' .. id, company) end
      local eventId = string.match(event, '[^:]*$')
      redis.call('ZADD', base .. 'ie:' .. id, tonumber(at), eventId)
      linkWaiting(id, eventId)
      spread(id, 'r', release)
      spread(id, 'e', environment)
      spread(id, 'c', company)
      if release ~= '' and environment ~= '' then spread(id, 'v', release .. '\n' .. environment) end
      for _, tag in ipairs(tags or {}) do spread(id, 't', tag) end
      countUser(id, user or '')
      countHour(base, id, at)
      minutely(id, now)
      if created then
        -- a CSP violation's new issue is a security trigger of its own
        local event = 'issue.created'
        if kind == 'security' then event = 'security.csp' end
        trigger({event = event, issue = id, at = now, environment = environment, level = level})
      end
      local change = issueOccurs(base, key, now, release, count)
      if change and change[1] == 'regressed' then
        changes[#changes + 1] = {id, 'regressed', change[2], now, release, change[3]}
        trigger({event = 'issue.regressed', issue = id, at = now, environment = environment, level = level,
          release = release, regression_kind = change[3]})
      elseif change then
        changes[#changes + 1] = {id, 'unignored', count, now, release, ''}
      end
      redis.call('HSET', KEYS[4], id, seq)
      errors = errors + 1
    end

    for _, a in ipairs(g.a) do
      local at = a.at
      for _, set in ipairs(a.sets) do
        local k, fold = base .. set[1], base .. 'dt:' .. set[1]
        redis.call('ZADD', k, tonumber(at), set[2])
        redis.call('ZREMRANGEBYSCORE', k, '-inf', tonumber(at) - 2 * lookback)
        redis.call('ZREMRANGEBYRANK', k, 0, -maxAttempts - 1)
        -- an attempt no newer than the newest a detector's saved fold holds: that fold no longer holds
        local folded = redis.call('HGET', fold, 'l')
        if folded and tonumber(at) <= tonumber(folded) then redis.call('DEL', fold) end
      end
      attempts = attempts + 1
    end
  end
end

if not seq then return {0, 0, 0, '[]'} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', newest - tonumber(ARGV[2]))
-- cjson writes an empty table as {}
if #changes == 0 then return {1, errors, attempts, '[]'} end
return {1, errors, attempts, cjson.encode(changes)}
