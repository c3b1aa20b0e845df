--[[
  A project's session table (included by the scripts that use it): each
  session's state and each user's worst rank per hour and per release, as
  fields of small hashes, so that Redis keeps each hash in its compact
  encoding (a listpack: a few bytes of overhead per field, where a key of its
  own costs about 100). Fields go to buckets by linear hashing: `n` buckets,
  split one at a time as the table grows, so a bucket holds about LOAD fields
  whatever the project's volume, and finding a field is one HGET.

  Keys under the project's prefix `base`:
    sm        hash: n buckets, c fields, p purge cursor, b bucket ids given
    ss:<i>    bucket i: field -> value
    bk, bi    (environment, release) bucket JSON -> small id, and back

  Fields and values (dids are the 16 hex digits of a keyed hash: stored as 8 bytes after a zero byte):
    'S' <16 bytes> or 's' <sid>      session (a 32-hex sid packed, any other as sent)
                                      -> rank:1 errors:4 started ms:8 (a double) bucket id:4, then the did
    'H' <hour:4> <bucket id:4> <did> the user's worst rank in the hour -> rank, one digit
    'R' <bucket id:4> <did>          the user's worst rank in the release -> rank, one digit
  Packed fields are placed by their own bytes (SDK ids are random); others by SHA-1.

  Nothing here expires by itself: every call that adds fields also walks a
  few buckets (in proportion) and drops sessions past the update window and
  user hours past their rollup's life, so stale fields live about one more
  window at most. A session or hour past the window is never read as live.
]]
local function sessionTable(base, now, window)
  local LOAD = 40
  local userTtl = window + 3600000 + 86400000
  local meta = base .. 'sm'
  local m = redis.call('HMGET', meta, 'n', 'c', 'p')
  local t = {n = tonumber(m[1]) or 1, count = tonumber(m[2]) or 0, cursor = tonumber(m[3]) or 0, added = 0}
  local level = 1
  while level * 2 <= t.n do level = level * 2 end
  local bucketIds, bucketJson = {}, {}

  -- 16 or 32 lowercase hex digits (checked by the callers) to their bytes, eight digits at a time.
  local function hexToBin(hex)
    if #hex == 16 then
      return struct.pack('>I4>I4', tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16))
    end
    return struct.pack('>I4>I4>I4>I4', tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16),
      tonumber(string.sub(hex, 17, 24), 16), tonumber(string.sub(hex, 25, 32), 16))
  end
  local function binToHex(bin)
    return (string.gsub(bin, '.', function(c) return string.format('%02x', string.byte(c)) end))
  end
  local didKeys = {}   -- a user is seen a few times a call (their session, hour and release)
  local function didKey(did)
    local key = didKeys[did]
    if key then return key end
    key = did
    if #did == 16 and not string.find(did, '[^0-9a-f]') then key = '\0' .. hexToBin(did) end
    didKeys[did] = key
    return key
  end
  local function didOf(key)
    if #key == 9 and string.byte(key, 1) == 0 then return binToHex(string.sub(key, 2)) end
    return key
  end
  -- Where a field hashes to. A packed sid is random bytes: its last four place it. A packed user field mixes the
  -- did's last four bytes with its hour and bucket, so one user's hours spread over the table. Anything else
  -- (ids as sent) goes through SHA-1.
  local function hashOf(field)
    local kind, length = string.byte(field, 1), #field
    if kind == 83 and length == 17 then return struct.unpack('>I4', field, 14) end -- 'S'
    if kind == 72 and length == 18 and string.byte(field, 10) == 0 then -- 'H'
      local hour, bucket = struct.unpack('>I4>I4', field, 2)
      return bit.bxor(struct.unpack('>I4', field, 15), hour, bucket * 40503)
    end
    if kind == 82 and length == 14 and string.byte(field, 6) == 0 then -- 'R'
      return bit.bxor(struct.unpack('>I4', field, 11), struct.unpack('>I4', field, 2) * 40503)
    end
    return tonumber(string.sub(redis.sha1hex(field), 1, 8), 16)
  end
  -- A field's bucket, remembered for the call (a field is mostly read, then written): the table only
  -- splits in close(), after every get and put.
  local slots = {}
  local function slot(field)
    local key = slots[field]
    if key then return key end
    local b = hashOf(field) % (2 * level)
    if b >= t.n then b = b - level end
    key = base .. 'ss:' .. b
    slots[field] = key
    return key
  end
  t.ms = function(x) return string.format('%.0f', x) end

  t.get = function(field) return redis.call('HGET', slot(field), field) end
  t.put = function(field, value)
    if redis.call('HSET', slot(field), field, value) == 1 then
      t.count = t.count + 1
      t.added = t.added + 1
    end
  end

  t.sessionField = function(sid)
    if #sid == 32 and not string.find(sid, '[^0-9a-f]') then return 'S' .. hexToBin(sid) end
    return 's' .. sid
  end
  -- A user's fields are a prefix (per hour and bucket, or per bucket) and the did as stored (didKey; '' stays '').
  t.didKey = didKey
  t.didOf = didOf
  t.userHourPrefix = function(hour, bucket)
    return 'H' .. struct.pack('>I4>I4', math.floor(hour / 3600000), bucket)
  end
  t.userReleasePrefix = function(bucket)
    return 'R' .. struct.pack('>I4', bucket)
  end
  -- A session's value: rank, errors, started (ms), bucket id, and the did as stored ('' for none).
  t.sessionValue = function(rank, errors, started, bucket, storedDid)
    return struct.pack('>BI4dI4', rank, errors, started, bucket) .. storedDid
  end
  t.readSession = function(value)
    local rank, errors, started, bucket = struct.unpack('>BI4dI4', value)
    return rank, errors, started, bucket, string.sub(value, 18)
  end

  -- The small id of a bucket's JSON [environment, release], given on first sight.
  t.bucketId = function(json)
    local id = bucketIds[json]
    if id then return id end
    id = tonumber(redis.call('HGET', base .. 'bk', json))
    if not id then
      id = redis.call('HINCRBY', meta, 'b', 1)
      redis.call('HSET', base .. 'bk', json, id)
      redis.call('HSET', base .. 'bi', id, json)
    end
    bucketIds[json] = id
    bucketJson[id] = json
    return id
  end
  t.bucketJson = function(id)
    local json = bucketJson[id]
    if json then return json end
    json = redis.call('HGET', base .. 'bi', id)
    bucketJson[id] = json
    return json
  end

  -- Whether a session started at `started` (ms) is past the update window: it is then treated as absent.
  local oldest = now - window
  t.stale = function(started) return started < oldest end

  local function expired(field, value)
    local kind = string.byte(field, 1)
    if kind == 83 or kind == 115 then return struct.unpack('>d', value, 6) < oldest end -- 'S', 's'
    if kind == 72 then return struct.unpack('>I4', field, 2) * 3600000 + userTtl < now end -- 'H'
    return false
  end

  -- Runs `command` on `key` with the arguments listed, a thousand to a call (Lua's stack bounds unpack; an even
  -- number, so HSET's field-value pairs stay whole).
  local function inSlices(command, key, args)
    for i = 1, #args, 1000 do redis.call(command, key, unpack(args, i, math.min(i + 999, #args))) end
  end

  -- Moves the fields of the next bucket to split that now hash to the new one, in one HSET and one HDEL: a
  -- command per field wrote each moved field's bucket key twice to the AOF, a fifth of all Redis wrote there
  -- while a table grew (docs/performance.md).
  local function split()
    local from = t.n - level
    local source, target = base .. 'ss:' .. from, base .. 'ss:' .. (from + level)
    local fields = redis.call('HGETALL', source)
    local moved, names = {}, {}
    for i = 1, #fields, 2 do
      if hashOf(fields[i]) % (2 * level) == from + level then
        moved[#moved + 1] = fields[i]
        moved[#moved + 1] = fields[i + 1]
        names[#names + 1] = fields[i]
      end
    end
    inSlices('HSET', target, moved)
    inSlices('HDEL', source, names)
    t.n = t.n + 1
    if t.n == 2 * level then level = 2 * level end
  end

  local function purge(bucket)
    local key = base .. 'ss:' .. bucket
    local fields = redis.call('HGETALL', key)
    local names = {}
    for i = 1, #fields, 2 do
      if expired(fields[i], fields[i + 1]) then names[#names + 1] = fields[i] end
    end
    inSlices('HDEL', key, names)
    t.count = t.count - #names
  end

  -- Splits while the table is over its load, walks buckets in proportion to what was added, saves the counters.
  t.close = function()
    if t.added == 0 then return end
    while t.count > LOAD * t.n do split() end
    for _ = 1, math.ceil(t.added / (LOAD / 2)) do
      purge(t.cursor % t.n)
      t.cursor = t.cursor + 1
    end
    redis.call('HSET', meta, 'n', t.n, 'c', t.count, 'p', t.cursor)
  end

  return t
end
