--[[
  The check every script on a project's hot state opens with. The project's
  epoch key holds the run id of the Redis server its state was verified on
  (src/state/rebuild.ts): a restarted server (a new run id) or a recount
  under way (the key deleted) makes them differ, and the script then changes
  nothing and answers that the state is unverified (-1, decoded by answerOf
  in src/state/scripts.ts) or, for a snapshot, that there is nothing to copy.
]]
local function verifiedEpoch(epochKey)
  local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
  return redis.call('GET', epochKey) == runId
end
