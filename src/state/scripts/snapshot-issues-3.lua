--[[
  What the flusher copies to MongoDB: every issue of one project changed
  since it was last flushed (or the ones named), with its company tags, read
  in one atomic step together with the project's event change counter.

  KEYS[1] epoch    run_id of the Redis this project's state was verified on
  KEYS[2] eseq     the project's event change counter
  KEYS[3] edirty   hash: issue id -> eseq of its last change

  ARGV[1] key prefix of the project, '<prefix>:{p:<id>}:'
  ARGV[2..] issue ids to read (none: every changed issue)

  Returns {verified, eseq, {id, version, {field, value, ...}, {company, ...}}, ...}
]]
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
if redis.call('GET', KEYS[1]) ~= runId then return {0, 0} end
local out = {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
local ids = {}
if #ARGV > 1 then
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i]; ids[#ids + 1] = redis.call('HGET', KEYS[3], ARGV[i]) or '' end
else
  ids = redis.call('HGETALL', KEYS[3])
end
for i = 1, #ids, 2 do
  out[#out + 1] = {ids[i], ids[i + 1], redis.call('HGETALL', ARGV[1] .. 'i:' .. ids[i]), redis.call('SMEMBERS', ARGV[1] .. 'ic:' .. ids[i])}
end
return out
