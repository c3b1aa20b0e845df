--[[
  Applies one chunk of one project's part of a raw session batch to the project's
  hot state, once: the chunk is recorded in the same atomic step, so a retry, a
  duplicate delivery or two workers on one batch change nothing twice. A part is
  applied in chunks of a few dozen entries (src/state/sessions.state.ts) because a
  script holds Redis while it runs. The last chunk records the batch id itself and
  drops the others' marks: what was applied is then the batch, as a recount records
  it. It mirrors
  `replayPart` / `planMerge` in src/domain/release-health.ts, the oracle the tests
  compare it with.

  Every key carries the project's hash tag ({p:<id>}), so the script runs on a
  Redis Cluster; keys built from ARGV[1] share it.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] seq      the project's change counter (one step per applied chunk)
  KEYS[3] applied  zset: batch id (or '<batch id>#<chunk>' until its last chunk) -> received (ms), trimmed to ARGV[5]
  KEYS[4] dirty    hash: rollup key (without prefix) -> seq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] batch id
  ARGV[3] when the batch was received (ms)
  ARGV[4] update window (ms)
  ARGV[5] how long applied batch ids are remembered (ms)
  ARGV[6] JSON {s: [{sid, rank, errors, did, started, hour, bucket}, ...],
                a: [{bucket, started, hour, did, counts: [ok, errored, abnormal, crashed]}, ...]}
          rank: 0 ok, 1 errored, 2 abnormal, 3 crashed (counts by rank); did '' for none;
          started and its hour's start in ms; bucket the JSON [environment, release]
  ARGV[7] '1': keep hour rollups without expiry (a recount replaying old batches into its scratch state)
  ARGV[8] the chunk's index, from 0
  ARGV[9] how many chunks the part has

  Keys under the prefix:
    sm, ss:*, bk, bi            the session table (lib/session-table.lua): each session's state and each
                                user's worst rank per hour and per release, in compact hashes
    rh:<hour>:<bucket>          hour rollup: s0..s3 sessions, u0..u3 users
    rr:<bucket>                 release rollup: s0..s3, u0..u3, f first seen, l last seen

  Returns {code, changed, unchanged, skipped}
    code  1 applied
          0 this batch was applied before: nothing changed
         -1 the state was not verified since this Redis started, or follows an older layout: verify, then
            call again
]]
-- #include lib/session-table.lua

-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return {-1, 0, 0, 0} end
local base = ARGV[1]
-- State kept in another layout (SESSION_LAYOUT in src/state/sessions.state.ts) is rebuilt first.
if redis.call('GET', base .. 'slayout') ~= '3' then return {-1, 0, 0, 0} end
local chunk, chunks = tonumber(ARGV[8]), tonumber(ARGV[9])
local applied = ARGV[2]
if chunk < chunks - 1 then applied = ARGV[2] .. '#' .. chunk end
if redis.call('ZSCORE', KEYS[3], ARGV[2]) or redis.call('ZSCORE', KEYS[3], applied) then return {0, 0, 0, 0} end

local now = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local seq = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[3], now, applied)
if applied == ARGV[2] then
  for i = 0, chunks - 2 do redis.call('ZREM', KEYS[3], ARGV[2] .. '#' .. i) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[5]))

local entries = cjson.decode(ARGV[6])
local sessions = sessionTable(base, now, window)
local changed, unchanged, skipped = 0, 0, 0
local marked = {}
local seen = {}   -- release bucket JSON -> {first, last} started (ms) among what changed
local userTtl = window + 3600000 + 86400000
local SESSIONS, USERS = {[0] = 's0', 's1', 's2', 's3'}, {[0] = 'u0', 'u1', 'u2', 'u3'}
local RANK, RANK_TEXT = {['0'] = 0, ['1'] = 1, ['2'] = 2, ['3'] = 3}, {[0] = '0', '1', '2', '3'}

-- Rollup counters and expiries are gathered and written once per key at the end: a batch of
-- 100 sessions over a few releases then costs a few commands instead of several per session,
-- in Redis and in its append-only file.
local increments = {}   -- key -> field -> change
local expiries = {}     -- key -> when it expires (ms)

local function add(key, field, n)
  local fields = increments[key]
  if not fields then
    fields = {}
    increments[key] = fields
  end
  fields[field] = (fields[field] or 0) + n
end

local function mark(suffix)
  if not marked[suffix] then
    marked[suffix] = true
    redis.call('HSET', KEYS[4], suffix, seq)
  end
end

local function touchRelease(place, started)
  local s = seen[place.json]
  if not s then
    seen[place.json] = {started, started}
  else
    if started < s[1] then s[1] = started end
    if started > s[2] then s[2] = started end
  end
end

-- A place: where a session or aggregate counts, a release bucket (the JSON [environment, release]) in an hour,
-- with the keys and field prefixes its counts and users go to; built once a call.
local places = {}   -- bucket JSON -> hour (ms) -> place
local function placeOf(json, hour)
  local byHour = places[json]
  if not byHour then
    byHour = {}
    places[json] = byHour
  end
  local place = byHour[hour]
  if place then return place end
  local id = sessions.bucketId(json)
  local hourSuffix, releaseSuffix = 'rh:' .. sessions.ms(hour) .. ':' .. json, 'rr:' .. json
  place = {
    json = json, hourSuffix = hourSuffix, releaseSuffix = releaseSuffix, id = id,
    hourKey = base .. hourSuffix, releaseKey = base .. releaseSuffix, expires = hour + userTtl,
    userHour = sessions.userHourPrefix(hour, id), userRelease = sessions.userReleasePrefix(id),
  }
  byHour[hour] = place
  return place
end

-- Moves n sessions started at `started` from rank `from` (nil: new) to rank `to`, in both rollups.
local function move(place, from, to, n, started)
  if from then
    add(place.hourKey, SESSIONS[from], -n)
    add(place.releaseKey, SESSIONS[from], -n)
  end
  add(place.hourKey, SESSIONS[to], n)
  add(place.releaseKey, SESSIONS[to], n)
  mark(place.hourSuffix)
  mark(place.releaseSuffix)
  expiries[place.hourKey] = place.expires
  touchRelease(place, started)
end

-- One user count: the user (their field) was seen with `rank`; keep their worst.
local function seeIn(field, key, suffix, rank)
  local current = RANK[sessions.get(field)]
  if current and current >= rank then return false end
  sessions.put(field, RANK_TEXT[rank])
  if current then add(key, USERS[current], -1) end
  add(key, USERS[rank], 1)
  mark(suffix)
  return true
end

-- A user (their did as stored) was seen with `rank` at a place: per hour and per release.
local function seeUser(place, storedDid, rank, started)
  seeIn(place.userHour .. storedDid, place.hourKey, place.hourSuffix, rank)
  if seeIn(place.userRelease .. storedDid, place.releaseKey, place.releaseSuffix, rank) then touchRelease(place, started) end
end

for _, u in ipairs(entries.s) do
  local sid, rank, errors, did, started, hour, bucket = u.sid, u.rank, u.errors, u.did, u.started, u.hour, u.bucket
  if sessions.stale(started) then
    skipped = skipped + 1
  else
    local field = sessions.sessionField(sid)
    local stored = sessions.get(field)
    local place, newRank, newErrors, newDid, oldRank
    local r, e, st, bk, d
    if stored then
      r, e, st, bk, d = sessions.readSession(stored)
      if sessions.stale(st) then stored = nil end   -- past the window: forgotten, as if expired
    end
    if stored then
      oldRank = r
      newRank = math.max(oldRank, rank)
      newErrors = math.max(e, errors)
      newDid = d
      if newDid == '' then newDid = sessions.didKey(did) end
      if newRank == oldRank and newErrors == e and newDid == d then
        unchanged = unchanged + 1
      else
        started = st
        place = placeOf(sessions.bucketJson(bk), st - st % 3600000)
      end
    else
      place = placeOf(bucket, hour)
      newRank, newErrors, newDid = rank, errors, sessions.didKey(did)
    end
    if place then
      sessions.put(field, sessions.sessionValue(newRank, newErrors, started, place.id, newDid))
      if oldRank ~= newRank then move(place, oldRank, newRank, 1, started) end
      if newDid ~= '' then seeUser(place, newDid, newRank, started) end
      changed = changed + 1
    end
  end
end

for _, a in ipairs(entries.a) do
  local bucket, started, hour, did, counts = a.bucket, a.started, a.hour, a.did, a.counts
  local n = counts[1] + counts[2] + counts[3] + counts[4]
  if sessions.stale(started) then
    skipped = skipped + n
  else
    local place = placeOf(bucket, hour)
    local worst
    for rank = 0, 3 do
      local count = counts[rank + 1]
      if count > 0 then
        move(place, nil, rank, count, started)
        worst = rank
      end
    end
    if did ~= '' and worst then seeUser(place, sessions.didKey(did), worst, started) end
    changed = changed + n
  end
end

for key, fields in pairs(increments) do
  for field, n in pairs(fields) do
    if n ~= 0 then redis.call('HINCRBY', key, field, n) end
  end
end
if ARGV[7] ~= '1' then
  for key, at in pairs(expiries) do redis.call('PEXPIREAT', key, at) end
end
sessions.close()

for json, s in pairs(seen) do
  local key = base .. 'rr:' .. json
  local first = redis.call('HGET', key, 'f')
  if not first or s[1] < tonumber(first) then redis.call('HSET', key, 'f', sessions.ms(s[1])) end
  local last = redis.call('HGET', key, 'l')
  if not last or s[2] > tonumber(last) then redis.call('HSET', key, 'l', sessions.ms(s[2])) end
end

return {1, changed, unchanged, skipped}
