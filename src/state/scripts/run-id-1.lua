--[[
  The run id of the Redis server that holds KEYS[1]'s slot: a restart, a
  new server or, on a cluster, a replica promoted to primary changes it, and
  each project's epoch (src/state/rebuild.ts) is compared with it.

  KEYS[1] any key of the project (its epoch)

  Returns the run id
]]
return string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
