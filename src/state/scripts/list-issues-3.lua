--[[
  One page of a project's issues, read from the list indexes that
  snapshot-issues-3.lua keeps, with each issue's hash: GET /api/v1/issues
  and the dashboard's list, searched as src/domain/search.ts reads a search.
  Its cost follows the page, not the project's number of issues, wherever
  it can: with no filter, a range of the order's zset; with one counted
  filter set, its count under the status (kept by the snapshot) is the
  total; with several sets, the match is counted by ZINTERCARD (in C,
  walking the smallest set; a set with a smaller complement, as has:user's
  fx:user beside fx:nouser, through it: the rest's match less its part in
  the complement), then a small match is read whole in order
  (ZINTER) and a large one by walking the order from the top until the page
  is full. A time or count range on the order's own zset narrows the walk
  to that window (ranks from ZCOUNT). With a negated set or a range on
  another zset, the total is counted apart when it can be (one negated
  set: the match less its part in that set; one range alone: ZCOUNT). The
  match is read from its smallest source (a filter set, or a range's
  window) and sorted when that is small or has at most COUNT_MAX members
  (about 1 ms per 2,000); else a large counted match is walked until the
  page is full, and one nothing counts is walked from the top: through
  all of it when it is smaller than that, else until the page is full
  and COUNT_MAX members are walked, the total then estimated from the
  share that matched.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] the order's zset: '<prefix>:{p:<id>}:x:<status>:<order>'
  KEYS[3] the status' filter counts: '<prefix>:{p:<id>}:xn:<status>'

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] 'desc' (highest score first) or 'asc'
  ARGV[3] offset
  ARGV[4] limit
  ARGV[5] the current hour (ms / 3600000): each row carries its events of the last 24 hours
  ARGV[6] JSON {in: [set, ...], counted: [bool, ...], complement: [set or '', ...], out: [set, ...], out_counted: [bool, ...],
          ranges: [[zset, min, max], ...], count: field}
          sets and zsets under the prefix ('fr:<release>', 'fl:<level>', 'tx:<word>', 'x:<status>:first', ...): an
          issue must be in every `in` set (`counted`: whether xn:<status> counts that set; `complement`: the set
          holding every other listed issue, where one is kept) and in no `out` set,
          with its score in each zset within [min, max] (integers as text); `count` names a field of each issue's
          spread (is:<issue>, 'r:<release>') whose events the row carries as its filtered count
  ARGV[7] 'bare' (optional): rows without their extras (hours, feedback, users, count: empty, 0, 0, -1), for a
          read that needs only which issues and their rows (the newest events of a project)

  Returns {1, total, estimated, id, row, hours, feedback, users, count, ...}: the total (estimated: 1 when it is
          an estimate) and each issue's row as snapshot-issues-3.lua last
          wrote it (one JSON text, ready: building rows here in Lua was most of a page's cost), its events per
          hour, oldest first (nil for none), how much user feedback it has (fb:), its distinct users (iu:) and its
          events in the spread field `count` (-1 without one); or {-1} when the state was not verified since this
          Redis started
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return {-1} end
local base, order = ARGV[1], KEYS[2]
local desc = ARGV[2] == 'desc'
local offset, limit, hour = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local plan = cjson.decode(ARGV[6])
local bare = ARGV[7] == 'bare'
local WALK_CHUNK_MAX = 1000
-- Most members of a source read whole and sorted, or of the order's window walked to count a match that nothing
-- else counts; past them, such a total is estimated.
local COUNT_MAX = 2500

-- The window of the order's zset the ranges on it leave, and the ranges on other zsets.
local lo, hi = '-inf', '+inf'
local others = {}
for _, r in ipairs(plan.ranges or {}) do
  if base .. r[1] == order then
    if lo == '-inf' or tonumber(r[2]) > tonumber(lo) then lo = r[2] end
    if hi == '+inf' or tonumber(r[3]) < tonumber(hi) then hi = r[3] end
  else
    others[#others + 1] = {base .. r[1], tonumber(r[2]), tonumber(r[3])}
  end
end
local size = redis.call('ZCOUNT', order, lo, hi)
local start = 0
if desc and hi ~= '+inf' then start = redis.call('ZCOUNT', order, '(' .. hi, '+inf') end
if not desc and lo ~= '-inf' then start = redis.call('ZCOUNT', order, '-inf', '(' .. lo) end

-- Members of the window, by rank within it.
local function range(from, to)
  to = math.min(to, size - 1)
  if from > to then return {} end
  if desc then return redis.call('ZREVRANGE', order, start + from, start + to) end
  return redis.call('ZRANGE', order, start + from, start + to)
end

-- The filter sets: key, name (as xn: counts it), whether counted, and the complement's key.
local ins, outs = {}, {}
for i, set in ipairs(plan['in'] or {}) do
  local complement = plan.complement and plan.complement[i] or ''
  ins[#ins + 1] = {key = base .. set, name = set, counted = plan.counted[i], complement = complement ~= '' and base .. complement or nil}
end
for i, set in ipairs(plan.out or {}) do outs[#outs + 1] = {key = base .. set, name = set, counted = plan.out_counted and plan.out_counted[i]} end
local function keysOf(sets)
  local out = {}
  for _, set in ipairs(sets) do out[#out + 1] = set.key end
  return out
end

-- How many issues of the whole order are in every one of `sets`, the cheapest exact way: none is the order's size,
-- one counted set its count under the status, otherwise ZINTERCARD (its cost the smallest set's members); a set whose
-- complement is smaller is counted through it: the others' match less their match in the complement.
local function matchCount(sets)
  if #sets == 0 then return size end
  if #sets == 1 and sets[1].counted then return tonumber(redis.call('HGET', KEYS[3], sets[1].name) or '0') end
  for i, set in ipairs(sets) do
    if set.complement and redis.call('SCARD', set.complement) < redis.call('SCARD', set.key) then
      local rest = {}
      for j, other in ipairs(sets) do if j ~= i then rest[#rest + 1] = other end end
      local within = {unpack(rest)}
      within[#within + 1] = {key = set.complement}
      return matchCount(rest) - matchCount(within)
    end
  end
  local keys = {order, unpack(keysOf(sets))}
  return redis.call('ZINTERCARD', #keys, unpack(keys))
end

-- Which of `members` pass every filter.
local function keep(members)
  local ok = {}
  for j = 1, #members do ok[j] = true end
  for _, set in ipairs(ins) do
    local found = redis.call('SMISMEMBER', set.key, unpack(members))
    for j = 1, #members do if found[j] == 0 then ok[j] = false end end
  end
  for _, set in ipairs(outs) do
    local found = redis.call('SMISMEMBER', set.key, unpack(members))
    for j = 1, #members do if found[j] == 1 then ok[j] = false end end
  end
  for _, r in ipairs(others) do
    local scores = redis.call('ZMSCORE', r[1], unpack(members))
    for j = 1, #members do
      local s = tonumber(scores[j])
      if not s or s < r[2] or s > r[3] then ok[j] = false end
    end
  end
  return ok
end

local ids, total, estimated = {}, 0, 0
local need = offset + limit

-- The match read from one source, a set or a range's window in its zset (`best`), 1,000 members at a time: each
-- in the order's window and passing every filter, sorted as the order's zset sorts (score, then member), the page
-- taken from it. Answers how many matched.
local function fromSource(best)
  local members
  if best.set then members = redis.call('SMEMBERS', best.set)
  else members = redis.call('ZRANGE', best.range[1], best.range[2], best.range[3], 'BYSCORE') end
  local found = {}
  for i = 1, #members, 1000 do
    local part = {unpack(members, i, math.min(#members, i + 999))}
    local scores = redis.call('ZMSCORE', order, unpack(part))
    local ok = keep(part)
    for j = 1, #part do
      local score = tonumber(scores[j])
      if ok[j] and score and (lo == '-inf' or score >= tonumber(lo)) and (hi == '+inf' or score <= tonumber(hi)) then
        found[#found + 1] = {part[j], score}
      end
    end
  end
  table.sort(found, function(a, b)
    if a[2] ~= b[2] then
      if desc then return a[2] > b[2] end
      return a[2] < b[2]
    end
    if desc then return a[1] > b[1] end
    return a[1] < b[1]
  end)
  for i = offset + 1, math.min(need, #found) do ids[#ids + 1] = found[i][1] end
  return #found
end

-- Walks the window from the top, `chunk` members at a time, keeping those that pass every filter as the page's
-- ids from `offset`: until the page is full (`untilFull`), or through the whole window but for `budget` members
-- once the page is full. Answers how many passed and how many were walked.
local function walk(chunk, untilFull, budget)
  local from, found = 0, 0
  while from < size and not ((untilFull or (budget and from >= budget)) and #ids >= limit) do
    local members = range(from, from + chunk - 1)
    if #members == 0 then break end
    local ok = keep(members)
    for j = 1, #members do
      if ok[j] then
        found = found + 1
        if found > offset and #ids < limit then ids[#ids + 1] = members[j] end
      end
    end
    from = from + chunk
  end
  return found, math.min(from, size)
end
if #ins == 0 and #outs == 0 and #others == 0 then
  total = size
  ids = range(offset, need - 1)
elseif #outs == 0 and #others == 0 and lo == '-inf' and hi == '+inf' then
  -- Sets only: counted, then read whole or walked until the page is full.
  local keys = {order, unpack(keysOf(ins))}
  total = matchCount(ins)
  if total > offset and (total <= 1000 or total <= 4 * need) then
    -- A small match: all of it in the order's scores (sets weigh 0), ascending.
    local args = {#keys, unpack(keys)}
    args[#args + 1] = 'WEIGHTS'
    args[#args + 1] = 1
    for _ = 2, #keys do args[#args + 1] = 0 end
    local all = redis.call('ZINTER', unpack(args))
    for i = offset + 1, math.min(need, #all) do ids[#ids + 1] = desc and all[#all + 1 - i] or all[i] end
  elseif total > offset then
    walk(math.min(WALK_CHUNK_MAX, math.max(100, math.ceil(need * size / total * 1.2))), true)
  end
else
  -- A negated set or a range on another zset. The match is counted without walking where it can be (one negated
  -- set: the sets' match less its part in it; one range alone: ZCOUNT). It is read from its smallest source (a set,
  -- or a range's window in its zset) and sorted when that is smaller than the order's window and small or at most
  -- COUNT_MAX; else walked from the top of the order: a counted match until the page is full, another up to
  -- COUNT_MAX members and then estimated.
  local whole = lo == '-inf' and hi == '+inf'
  if whole and #outs == 1 and #others == 0 then
    local within = {unpack(ins)}
    within[#within + 1] = outs[1]
    total = matchCount(ins) - matchCount(within)
  elseif whole and #outs == 0 and #ins == 0 and #others == 1 then
    total = redis.call('ZCOUNT', others[1][1], others[1][2], others[1][3])
  else
    total = nil
  end
  local best = nil
  for _, set in ipairs(ins) do
    local n = redis.call('SCARD', set.key)
    if not best or n < best.size then best = {size = n, set = set.key} end
  end
  for _, r in ipairs(others) do
    local n = redis.call('ZCOUNT', r[1], r[2], r[3])
    if not best or n < best.size then best = {size = n, range = r} end
  end
  local small = total ~= nil and (total <= 1000 or total <= 4 * need)
  if best and best.size < size and (small or best.size <= COUNT_MAX) then
    -- read whole: at most COUNT_MAX members, where a walk for a sparse match could pass many more
    total = fromSource(best)
  elseif total ~= nil then
    walk(WALK_CHUNK_MAX, true)
  else
    -- Only walking counts this match: through COUNT_MAX members of the window at most (and until the page is
    -- full); past them the total is the share of the walked members that matched, over the whole window.
    local found, walked = walk(WALK_CHUNK_MAX, false, COUNT_MAX)
    total = found
    if walked < size then
      total = math.max(offset + #ids, math.floor(found * size / walked + 0.5))
      estimated = 1
    end
  end
end

local hours = {}
for h = hour - 23, hour do hours[#hours + 1] = h end
local out = {1, total, estimated}
for _, id in ipairs(ids) do
  local row = redis.call('GET', base .. 'r:' .. id)
  if row and bare then
    out[#out + 1] = id
    out[#out + 1] = row
    out[#out + 1] = {}
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = -1
  elseif row then
    out[#out + 1] = id
    out[#out + 1] = row
    out[#out + 1] = redis.call('HMGET', base .. 'ih:' .. id, unpack(hours))
    out[#out + 1] = redis.call('ZCARD', base .. 'fb:' .. id)
    out[#out + 1] = redis.call('PFCOUNT', base .. 'iu:' .. id)
    out[#out + 1] = plan.count and tonumber(redis.call('HGET', base .. 'is:' .. id, plan.count) or '0') or -1
  end
end
return out
