--[[
  What a burst detector folds next (src/domain/bursts.ts `resume`): its saved
  fold and the attempts after it, with the window's failures that may leave
  it; or, where no saved fold can be gone on from, every attempt since the
  look-back's start, for a fold from the start.

  A saved fold is gone on from only when it was made with the same settings,
  its window lies inside the look-back, and the attempts are below the cap
  (trimming then never took a failure of its window).

  A project whose state a rebuild or recount is replacing (its epoch key deleted: the attempts are
  dropped and refilled) is not read: a fold of what the rebuild has not written back yet would find
  nothing, and the attempts applied would never be judged; the job is retried instead (issue 66).
  Only the key's presence is checked, not lib/epoch.lua's run id: this runs once per detector key,
  several a job, and INFO on each would cost Redis more than the reads; a restarted Redis holds the
  attempts its AOF restored, which a fold may read.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on (deleted while it is replaced)
  KEYS[2] the attempts: ag:<group>, aip:<ip> or a64:<prefix> (score at, see apply-events-4.lua)
  KEYS[3] the saved fold: dt:<that key>, a hash {v version token, s the fold's JSON,
          l newest attempt folded (ms), w where its window's failures start (ms), k settings}

  ARGV[1] the look-back's start (ms)
  ARGV[2] the window (ms)
  ARGV[3] the settings' key
  ARGV[4] the most attempts a key keeps
  ARGV[5] 'full': read from the look-back's start, whatever is saved

  Returns {version or '', fold JSON or '', window start (ms), read from (ms),
           attempts from there on (member, score, ...), leaving failures (member, score, ...)},
          or -1 when the project's state is being replaced
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local saved = redis.call('HMGET', KEYS[3], 'v', 's', 'l', 'w', 'k')
local since = ARGV[1]
local usable = saved[2] and saved[5] == ARGV[3] and tonumber(saved[4]) >= tonumber(since)
  and ARGV[5] ~= 'full' and redis.call('ZCARD', KEYS[2]) < tonumber(ARGV[4])
if not usable then
  return {saved[1] or '', '', since, since, redis.call('ZRANGEBYSCORE', KEYS[2], since, '+inf', 'WITHSCORES'), {}}
end
local fresh = redis.call('ZRANGEBYSCORE', KEYS[2], saved[3], '+inf', 'WITHSCORES')
local leaving = {}
if #fresh > 0 then
  -- only failures at most a window older than the newest attempt can leave; the ones after the fold are fresh
  local bound = math.min(tonumber(fresh[#fresh]) - tonumber(ARGV[2]), tonumber(saved[3]))
  if bound >= tonumber(saved[4]) then
    leaving = redis.call('ZRANGEBYSCORE', KEYS[2], saved[4], string.format('%.0f', bound), 'WITHSCORES')
  end
end
return {saved[1], saved[2], saved[4], saved[3], fresh, leaving}
