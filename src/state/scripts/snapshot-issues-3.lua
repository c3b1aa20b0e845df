--[[
  What the flusher copies to MongoDB: every issue of one project changed
  since it was last flushed (or the ones named), with its company tags, read
  in one atomic step together with the project's event change counter.

  The same step brings each issue read into the list indexes (read by
  list-issues-3.lua), so the lists show what MongoDB is being given:
    x:<status>:<order>  zset per status and order (last, first, count, id): score -> issue id
    fl:<level>, fk:<kind>  sets of issue ids, by the issue's level and kind
    tx:<token>          set of issue ids whose title or culprit holds the token (a word, or two neighbouring words)
    xn:<status>         hash: filter set ('fl:<level>', 'fk:', 'tx:', and apply-events-4.lua's 'fr:', 'fe:',
                        'fc:') -> how many issues of the status it holds, so a list filtered by one set
                        answers its total without intersecting (apply-events-4.lua counts the issue's
                        new releases, environments and companies in its indexed status)
    fa:<assignee>, fx:assigned  sets of issue ids assigned to that member, to anyone
    ff:<release>, fg:<release>  sets of issue ids first seen in the release, last regressed in it
    fx:regressed        set of unresolved issue ids that regressed since they were last resolved
    fx:nouser           set of issue ids without a user (apply-events-4.lua's fx:user holds the others)
    r:<issue>           the issue's list row, ready: JSON [ROW_FIELDS' values ('' for none), company tags]
  These sets are not counted in xn: (list-issues-3.lua intersects them). The issue hash remembers what it is
  indexed under (x_status, x_level, x_text, x_assignee, x_first_release, x_regressed_release, x_regressed), so
  an issue moves only when one of them changed.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] HSCAN cursor over edirty ('0' to begin), read when no ids are named
  ARGV[3] how many changed issues to read in this call (HSCAN's COUNT: about that many), so that
          a project with 100,000 changed issues never holds Redis for long in one call
  ARGV[4..] issue ids to read (none: the changed issues, a chunk at a time)

  Returns {verified, eseq, next cursor ('0': the last chunk), {id, version, {field, value, ...}, {company, ...}}, ...}
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return {0, 0, '0'} end
local base = ARGV[1]
local ORDERS = {'last', 'first', 'count', 'id'}
-- The fields of an issue a list row shows, in the order src/state/issue-reads.ts reads them.
local ROW_FIELDS = {'kind', 'fingerprint', 'title', 'culprit', 'exception_type', 'level', 'status', 'first', 'last', 'count',
  'last_release', 'regressions', 'resolves', 'resolved_at', 'resolved_release', 'regressed_at', 'regression_kind',
  'created', 'latest', 'policy', 'first_release', 'assignee', 'resolved_next', 'ignore_count', 'ignore_until',
  'regressed_release'}

-- The words of a title or culprit (src/domain/search.ts' textWords reads a search the same way): split at ASCII
-- spaces and punctuation, each word whole and in its camelCase parts ('BetaError': betaerror, beta, error), ASCII
-- letters lower-cased, words of one character left out; and each two neighbouring whole words of a line as a pair,
-- '<word> <word>', so that a quoted phrase is matched as one.
local function tokens(text)
  local out, seen = {}, {}
  local function add(word)
    word = string.lower(word)
    if #word > 1 and not seen[word] then seen[word] = true; out[#out + 1] = word end
  end
  for line in string.gmatch(text, '[^\n]+') do
    local previous = nil
    for word in string.gmatch(line, '[^%s%p]+') do
      add(word)
      for part in string.gmatch(word, '%u?%l+%d*') do add(part) end
      if previous then add(previous .. ' ' .. word) end
      previous = word
    end
  end
  return out
end

-- Counts an issue in (by 1) or out of (by -1) a filter set under a status; a count of none is dropped.
local function count(status, set, by)
  if redis.call('HINCRBY', base .. 'xn:' .. status, set, by) <= 0 then redis.call('HDEL', base .. 'xn:' .. status, set) end
end

-- The filter sets an issue is in, with the level and text it was indexed under (none before its first index).
local function sets(id, kind, level, text)
  local out = {'fk:' .. kind}
  if level then out[#out + 1] = 'fl:' .. level end
  if text then for _, word in ipairs(tokens(text)) do out[#out + 1] = 'tx:' .. word end end
  for _, dim in ipairs(redis.call('HKEYS', base .. 'is:' .. id)) do out[#out + 1] = 'f' .. dim end
  return out
end

-- Keeps the issue in the set of its field's value ('<prefix><value>', none for ''), and in `any` while it has one.
local function member(id, key, field, prefix, any)
  local h = redis.call('HMGET', key, field, 'x_' .. field)
  local now, was = h[1] or '', h[2] or ''
  if now == was then return end
  if was ~= '' then redis.call('SREM', base .. prefix .. was, id) end
  if now ~= '' then redis.call('SADD', base .. prefix .. now, id) end
  if any then
    if now ~= '' then redis.call('SADD', base .. any, id) else redis.call('SREM', base .. any, id) end
  end
  redis.call('HSET', key, 'x_' .. field, now)
end

local function index(id, key)
  local h = redis.call('HMGET', key, 'status', 'last', 'first', 'count', 'level', 'kind', 'title', 'culprit', 'x_status', 'x_level', 'x_text')
  local status, level, kind, text = h[1], h[5], h[6], (h[7] or '') .. '\n' .. (h[8] or '')
  if not status then return end
  local was, wasLevel, wasText = h[9], h[10], h[11]
  if was ~= status then
    -- Every set it is in counts it under its new status (its level and text as indexed; their changes below).
    for _, set in ipairs(sets(id, kind, wasLevel, wasText)) do
      if was then count(was, set, -1) end
      count(status, set, 1)
    end
    if was then
      for _, order in ipairs(ORDERS) do redis.call('ZREM', base .. 'x:' .. was .. ':' .. order, id) end
    else
      redis.call('SADD', base .. 'fk:' .. kind, id)
    end
  end
  local scores = {last = h[2], first = h[3], count = h[4], id = id}
  for _, order in ipairs(ORDERS) do redis.call('ZADD', base .. 'x:' .. status .. ':' .. order, tonumber(scores[order]), id) end
  if wasLevel ~= level then
    if wasLevel then
      redis.call('SREM', base .. 'fl:' .. wasLevel, id)
      count(status, 'fl:' .. wasLevel, -1)
    end
    redis.call('SADD', base .. 'fl:' .. level, id)
    count(status, 'fl:' .. level, 1)
  end
  if wasText ~= text then
    if wasText then
      for _, word in ipairs(tokens(wasText)) do
        redis.call('SREM', base .. 'tx:' .. word, id)
        count(status, 'tx:' .. word, -1)
      end
    end
    for _, word in ipairs(tokens(text)) do
      redis.call('SADD', base .. 'tx:' .. word, id)
      count(status, 'tx:' .. word, 1)
    end
  end
  redis.call('HSET', key, 'x_status', status, 'x_level', level, 'x_text', text)
  member(id, key, 'assignee', 'fa:', 'fx:assigned')
  member(id, key, 'first_release', 'ff:')
  member(id, key, 'regressed_release', 'fg:')
  -- has:user's other half: an issue without a user (apply-events-4.lua takes it out with its first one)
  if redis.call('SISMEMBER', base .. 'fx:user', id) == 0 then redis.call('SADD', base .. 'fx:nouser', id) end
  local r = redis.call('HMGET', key, 'regressed_at', 'resolved_at', 'x_regressed')
  local regressedAt, resolvedAt = tonumber(r[1] or ''), tonumber(r[2] or '') or 0
  local regressed = (status == 'unresolved' and regressedAt and regressedAt > resolvedAt) and '1' or ''
  if regressed ~= (r[3] or '') then
    if regressed == '1' then redis.call('SADD', base .. 'fx:regressed', id) else redis.call('SREM', base .. 'fx:regressed', id) end
    redis.call('HSET', key, 'x_regressed', regressed)
  end
  local row = redis.call('HMGET', key, unpack(ROW_FIELDS))
  for i = 1, #ROW_FIELDS do row[i] = row[i] or '' end
  redis.call('SET', base .. 'r:' .. id, cjson.encode({row, redis.call('SMEMBERS', base .. 'ic:' .. id)}))
end

local out = {1, tonumber(redis.call('GET', KEYS[2]) or '0'), '0'}
local ids = {}
if #ARGV > 3 then
  for i = 4, #ARGV do ids[#ids + 1] = ARGV[i]; ids[#ids + 1] = redis.call('HGET', KEYS[3], ARGV[i]) or '' end
else
  local scan = redis.call('HSCAN', KEYS[3], ARGV[2], 'COUNT', ARGV[3])
  out[3], ids = scan[1], scan[2]
end
for i = 1, #ids, 2 do
  local key = base .. 'i:' .. ids[i]
  index(ids[i], key)
  out[#out + 1] = {ids[i], ids[i + 1], redis.call('HGETALL', key), redis.call('SMEMBERS', base .. 'ic:' .. ids[i])}
end
return out
