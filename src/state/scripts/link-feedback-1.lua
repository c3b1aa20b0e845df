--[[
  Links a piece of user feedback to the issue of the event it is about
  (src/services/feedback.service.ts): the issue of the event's fingerprint
  when it exists, else the feedback waits for the event under its id, and
  apply-events-4.lua links it when the event is counted. One atomic step, so
  an event applied meanwhile cannot be missed.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] the event's fingerprint ('' when the event is not stored yet)
  ARGV[3] the event id ('' for feedback about no event)
  ARGV[4] the feedback id (32 hex)
  ARGV[5] when it was written (ms)
  ARGV[6] how long feedback waits for its event (ms)

  Keys under the prefix:
    fb:<issue>     the issue's feedback: score when written (ms), member feedback id
    fbw:<event>    feedback waiting for the event: members '<ms>:<feedback id>'

  Returns the issue id linked, 0 when the feedback waits (or names no event), -1 when the state was not verified
  since this Redis started (a rebuild links it from MongoDB)
]]
-- #include lib/epoch.lua
if not verifiedEpoch(KEYS[1]) then return -1 end
local base = ARGV[1]
if ARGV[2] ~= '' then
  local issue = redis.call('HGET', base .. 'fp', ARGV[2])
  if issue and redis.call('EXISTS', base .. 'i:' .. issue) == 1 then
    redis.call('ZADD', base .. 'fb:' .. issue, ARGV[5], ARGV[4])
    return tonumber(issue)
  end
end
if ARGV[3] ~= '' then
  local waiting = base .. 'fbw:' .. ARGV[3]
  redis.call('SADD', waiting, ARGV[5] .. ':' .. ARGV[4])
  redis.call('PEXPIRE', waiting, ARGV[6])
end
return 0
