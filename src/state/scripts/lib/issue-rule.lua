--[[
  The issue rule, as src/domain/issue-lifecycle.ts' `occur` states it (test/issue-rule.test.ts compares the two on
  random sequences): what an occurrence received at `at` does to the status of the issue whose hash is `key`, once
  the issue counts it (`count`: its events or attempts with this one). `release` is the occurrence's ('' none).
  - resolved before `at`: it regresses (same_release in the release it was resolved in, new_release otherwise);
    resolved in the next release, only on an occurrence of a newer release, by first event in `rf`; one with no
    release stands for the project's newest, so it regresses once the next release is out;
  - ignored until a count or a time that this occurrence reaches: the ignore ends.
  Returns nil, {'regressed', regressions, kind} or {'unignored', count}.
]]
local function issueOccurs(base, key, at, release, count)
  local s = redis.call('HMGET', key, 'status', 'resolved_at', 'resolved_release', 'resolved_next', 'ignore_count', 'ignore_until')
  if s[1] == 'resolved' and tonumber(s[2] or '') and tonumber(s[2]) < at then
    if s[4] == '1' then
      local seen = release
      if seen == '' then seen = redis.call('ZREVRANGE', base .. 'rf', 0, 0)[1] or '' end
      if seen == '' then return nil end
      local than = s[3] or ''
      if than ~= '' then
        local a, b = redis.call('ZSCORE', base .. 'rf', seen), redis.call('ZSCORE', base .. 'rf', than)
        if b ~= false and (a == false or tonumber(a) <= tonumber(b)) then return nil end
      end
    end
    local kind = 'new_release'
    if release ~= '' and release == s[3] then kind = 'same_release' end
    redis.call('HSET', key, 'status', 'unresolved', 'regressed_at', at, 'regression_kind', kind, 'regressed_release', release,
      'resolved_next', '')
    return {'regressed', redis.call('HINCRBY', key, 'regressions', 1), kind}
  end
  if s[1] == 'ignored' and ((s[5] and s[5] ~= '' and count >= tonumber(s[5])) or (s[6] and s[6] ~= '' and at >= tonumber(s[6]))) then
    redis.call('HSET', key, 'status', 'unresolved', 'ignore_count', '', 'ignore_until', '')
    return {'unignored', count}
  end
  return nil
end
