--[[
  Noise control for one channel: a delivery goes out alone while the channel
  sent fewer than `limit` messages in the last `window` ms and no digest is
  gathering; otherwise it joins the channel's digest, which goes out `window`
  ms after it opened (src/notify/dispatcher.ts enqueues it, delayed). The
  decision is remembered per delivery, so routing a delivery again (a
  dispatcher retried or two at once) answers the same.

  KEYS[1] sent     zset: the channel's messages (deliveries and digests) by when they were routed (ms)
  KEYS[2] buffer   list: the bodies of the gathering digest's first `items` deliveries
  KEYS[3] pending  hash: the gathering digest: id, due (ms), count
  KEYS[4] record   the decision for this delivery

  ARGV[1] now (ms)   ARGV[2] limit   ARGV[3] window (ms)   ARGV[4] most bodies a digest keeps
  ARGV[5] the delivery's id   ARGV[6] its body, JSON   ARGV[7] the id a digest opened now takes

  Returns {'send'} or {'digest', digest id, due (ms)}
]]
local known = redis.call('GET', KEYS[4])
if known then
  if known == 'send' then return {'send'} end
  local id, due = string.match(known, '^digest|([^|]*)|(%d+)$')
  return {'digest', id, due}
end
local now, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('SET', KEYS[4], 'send', 'PX', 7 * 86400000)
  return {'send'}
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('HSET', KEYS[3], 'id', ARGV[7], 'due', now + window, 'count', 0)
end
local pending = redis.call('HMGET', KEYS[3], 'id', 'due')
if redis.call('HINCRBY', KEYS[3], 'count', 1) <= tonumber(ARGV[4]) then redis.call('RPUSH', KEYS[2], ARGV[6]) end
redis.call('SET', KEYS[4], 'digest|' .. pending[1] .. '|' .. pending[2], 'PX', 7 * 86400000)
return {'digest', pending[1], pending[2]}
