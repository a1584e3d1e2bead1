-- Replaces the stored answer of a call completed as UNRESOLVED with its reconciled outcome.
--
-- KEYS[1]  the record's hash key
-- ARGV[1]  the settled result, JSON (a StoredResult)
-- ARGV[2]  how long the settled record lives from now, whole milliseconds > 0
--
-- Returns 1 when the record was completed with outcome 'UNRESOLVED' and now holds ARGV[1]; 0 (and
-- writes nothing) when the key is absent or expired, in flight, or completed with any other outcome.
-- The fingerprint is kept, so a duplicate with other arguments is still a conflict. No owner check:
-- the call's owner completed it long ago; only an UNRESOLVED answer is ever replaced.

local key = KEYS[1]
local rec = redis.call('HMGET', key, 'state', 'stored')
if rec[1] ~= 'completed' or not rec[2] then
  return 0
end
local ok, stored = pcall(cjson.decode, rec[2])
if not ok or type(stored) ~= 'table' or stored['outcome'] ~= 'UNRESOLVED' then
  return 0
end
redis.call('HSET', key, 'stored', ARGV[1])
redis.call('PEXPIRE', key, tonumber(ARGV[2]))
return 1
