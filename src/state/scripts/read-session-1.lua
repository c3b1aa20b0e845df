--[[
  One session's state in a project's session table, or nil when it is
  unknown or past the update window (tests and tools; workers never read it).

  KEYS[1] sm       the table's counters (lib/session-table.lua)
  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2] sid
  ARGV[3] now (ms)
  ARGV[4] update window (ms)

  Returns {rank, errors, started (ms), did ('' for none), bucket JSON [environment, release]}.
]]
-- #include lib/session-table.lua

local sessions = sessionTable(ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]))
local stored = sessions.get(sessions.sessionField(ARGV[2]))
if not stored then return nil end
local rank, errors, started, bucket, did = sessions.readSession(stored)
if sessions.stale(started) then return nil end
return {rank, errors, sessions.ms(started), sessions.didOf(did), sessions.bucketJson(bucket)}
