--[[
  Runs a lease taken with SET <key> <token> NX PX <ms> out <ms> from now, if
  the caller still holds it: a lease that ran out and was taken by another
  keeps its own holder and expiry (a GET then a PEXPIRE could extend it).

  KEYS[1] the lease
  ARGV[1] the caller's token
  ARGV[2] milliseconds from now

  Returns 1 renewed, 0 not the caller's (or gone)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
