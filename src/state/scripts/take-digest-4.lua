--[[
  Closes a channel's gathering digest when it is due (route-notice-4.lua):
  its bodies and count move to the digest's own key, kept for a week, so a
  retried delivery sends the same digest; the digest counts as a message
  sent. Taking a digest taken before answers what was taken.

  KEYS[1] sent     zset: the channel's messages by when they were routed (ms)
  KEYS[2] buffer   list: the gathering digest's bodies
  KEYS[3] pending  hash: the gathering digest: id, due, count
  KEYS[4] digest   list: [count, body, body, ...] of this digest

  ARGV[1] the digest's id   ARGV[2] now (ms)   ARGV[3] window (ms)

  Returns {count, body, ...}; {} when nothing is known of the digest (its Redis state was lost)
]]
if redis.call('EXISTS', KEYS[4]) == 0 then
  if redis.call('HGET', KEYS[3], 'id') ~= ARGV[1] then return {} end
  redis.call('RPUSH', KEYS[4], redis.call('HGET', KEYS[3], 'count'))
  local bodies = redis.call('LRANGE', KEYS[2], 0, -1)
  if #bodies > 0 then redis.call('RPUSH', KEYS[4], unpack(bodies)) end
  redis.call('DEL', KEYS[2], KEYS[3])
  redis.call('PEXPIRE', KEYS[4], 7 * 86400000)
  redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
end
return redis.call('LRANGE', KEYS[4], 0, -1)
