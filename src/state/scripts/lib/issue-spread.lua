-- Counts an event in one dimension of the issue's spread (is:<issue>: 'r:<release>', 'e:<environment>', ...); the
-- issue joins the dimension's filter set (f<dim>:<value>) on its first, and counts in the set's size under the status
-- the lists hold it in (xn:<status>, snapshot-issues-3.lua). Past MAX_SPREAD fields a tag's events count in 'o:tags'.
-- `base` is the project's key prefix.
local MAX_SPREAD = 2000
local function spreadIssue(base, id, dim, value)
  if value == '' then return end
  local key, field = base .. 'is:' .. id, dim .. ':' .. value
  if dim == 't' and redis.call('HEXISTS', key, field) == 0 and redis.call('HLEN', key) >= MAX_SPREAD then
    redis.call('HINCRBY', key, 'o:tags', 1)
    return
  end
  if redis.call('HINCRBY', key, field, 1) == 1 then
    redis.call('SADD', base .. 'f' .. dim .. ':' .. value, id)
    local indexed = redis.call('HGET', base .. 'i:' .. id, 'x_status')
    if indexed then redis.call('HINCRBY', base .. 'xn:' .. indexed, 'f' .. dim .. ':' .. value, 1) end
  end
end
