-- Records the final result of a claimed call, if the caller still owns the claim.
--
-- KEYS[1]  the record's hash key
-- ARGV[1]  owner id of the caller
-- ARGV[2]  the stored result, JSON
-- ARGV[3]  how long the completed record lives, whole milliseconds > 0
--
-- Returns 1 when the record is now completed; 0 (and writes nothing) when the key is absent, already
-- completed, or in flight for another owner (taken over after this owner's lease ran out).
-- An owner whose lease ran out may still complete while nobody has taken the key over.

local key = KEYS[1]
local rec = redis.call('HMGET', key, 'state', 'owner')
if rec[1] ~= 'in-flight' or rec[2] ~= ARGV[1] then
  return 0
end
redis.call('HSET', key, 'state', 'completed', 'stored', ARGV[2])
redis.call('HDEL', key, 'lease')
redis.call('PEXPIRE', key, tonumber(ARGV[3]))
return 1
