--[[
  Saves a burst detector's fold (read-detector-3.lua) unless something moved
  since it was read: another fold was saved, an attempt older than the saved
  fold's newest arrived (apply-events-4.lua then deletes the fold), or the
  attempts the fold read changed in number. Either way the fold already
  recorded its bursts; the next one goes on from whatever is saved.

  KEYS[1] the attempts
  KEYS[2] the saved fold

  ARGV[1] the version read ('' for none)
  ARGV[2], ARGV[3] the span the fold read (ms, inclusive), up to its newest attempt
  ARGV[4] how many attempts it read in that span
  ARGV[5] a new version token
  ARGV[6] the fold's JSON
  ARGV[7] where its window's failures start (ms)
  ARGV[8] the settings' key
  ARGV[9] how long the fold is kept (ms)

  Returns 1 saved, 0 not saved
]]
if (redis.call('HGET', KEYS[2], 'v') or '') ~= ARGV[1] then return 0 end
if redis.call('ZCOUNT', KEYS[1], ARGV[2], ARGV[3]) ~= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[2], 'v', ARGV[5], 's', ARGV[6], 'l', ARGV[3], 'w', ARGV[7], 'k', ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return 1
