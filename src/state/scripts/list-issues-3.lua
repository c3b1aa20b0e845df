--[[
  One page of a project's issues, read from the list indexes that
  snapshot-issues-3.lua keeps, with each issue's hash: GET /api/v1/issues
  and the dashboard's list. Its cost follows the page, not the project's
  number of issues: with no filter, a range of the order's zset; with one
  filter set, its count under the status (kept by the snapshot) is the
  total; with several, the match is counted by ZINTERCARD (in C, walking
  the smallest set). Then a small match is read whole in order (ZINTER) and
  a large one by walking the order from the top until the page is full.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] the order's zset: '<prefix>:{p:<id>}:x:<status>:<order>'
  KEYS[3] the status' filter counts: '<prefix>:{p:<id>}:xn:<status>'

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] 'desc' (highest score first) or 'asc'
  ARGV[3] offset
  ARGV[4] limit
  ARGV[5] the current hour (ms / 3600000): each row carries its events of the last 24 hours
  ARGV[6..] filter sets under the prefix ('fr:<release>', 'fe:<environment>', 'fc:<company>',
            'fl:<level>', 'fk:<kind>', 'tx:<word>'): an issue must be in every one

  Returns {1, total, id, row, hours, feedback, id, row, hours, feedback, ...}: each issue's row as
          snapshot-issues-3.lua last wrote it (one JSON text, ready: building rows here in Lua was most of a
          page's cost), its events per hour, oldest first (nil for none), and how much user feedback it has (fb:)
          or {-1} when the state was not verified since this Redis started
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return {-1} end
local base, order = ARGV[1], KEYS[2]
local desc = ARGV[2] == 'desc'
local offset, limit, hour = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local WALK_CHUNK_MAX = 1000

local function range(from, to)
  if desc then return redis.call('ZREVRANGE', order, from, to) end
  return redis.call('ZRANGE', order, from, to)
end

local keys = {order}
for i = 6, #ARGV do keys[#keys + 1] = base .. ARGV[i] end

local ids, total = {}, 0
if #keys == 1 then
  total = redis.call('ZCARD', order)
  ids = range(offset, offset + limit - 1)
else
  if #keys == 2 then
    total = tonumber(redis.call('HGET', KEYS[3], ARGV[6]) or '0')
  else
    total = redis.call('ZINTERCARD', #keys, unpack(keys))
  end
  local need = offset + limit
  if total > offset and (total <= 1000 or total <= 4 * need) then
    -- A small match: all of it in the order's scores (sets weigh 0), ascending.
    local args = {#keys, unpack(keys)}
    args[#args + 1] = 'WEIGHTS'
    args[#args + 1] = 1
    for _ = 2, #keys do args[#args + 1] = 0 end
    local all = redis.call('ZINTER', unpack(args))
    for i = offset + 1, math.min(need, #all) do ids[#ids + 1] = desc and all[#all + 1 - i] or all[i] end
  elseif total > offset then
    -- A large match: walk the order from the top, keeping members of every set, until the page is full.
    local size = redis.call('ZCARD', order)
    local chunk = math.min(WALK_CHUNK_MAX, math.max(100, math.ceil(need * size / total * 1.2)))
    local start, found = 0, 0
    while #ids < limit and start < size do
      local members = range(start, start + chunk - 1)
      if #members == 0 then break end
      local keep = {}
      for k = 2, #keys do
        local inSet = redis.call('SMISMEMBER', keys[k], unpack(members))
        for j = 1, #members do if inSet[j] == 0 then keep[j] = false end end
      end
      for j = 1, #members do
        if keep[j] ~= false then
          found = found + 1
          if found > offset and #ids < limit then ids[#ids + 1] = members[j] end
        end
      end
      start = start + chunk
    end
  end
end

local hours = {}
for h = hour - 23, hour do hours[#hours + 1] = h end
local out = {1, total}
for _, id in ipairs(ids) do
  local row = redis.call('GET', base .. 'r:' .. id)
  if row then
    out[#out + 1] = id
    out[#out + 1] = row
    out[#out + 1] = redis.call('HMGET', base .. 'ih:' .. id, unpack(hours))
    out[#out + 1] = redis.call('ZCARD', base .. 'fb:' .. id)
  end
end
return out
