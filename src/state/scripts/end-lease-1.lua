--[[
  Ends a lease taken with SET <key> <token> NX PX <ms>, if the caller still
  holds it: a lease that ran out and was taken by another is left alone.

  KEYS[1] the lease
  ARGV[1] the caller's token

  Returns 1 ended, 0 not the caller's (or gone)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
