-- Gives up a claim so a later claim of the key starts afresh ('claimed').
--
-- KEYS[1]  the record's hash key
-- ARGV[1]  owner id of the caller
--
-- Returns 1 when the caller's in-flight claim was removed; 0 (and changes nothing) when the key is
-- absent, completed, or in flight for another owner.

local key = KEYS[1]
local rec = redis.call('HMGET', key, 'state', 'owner')
if rec[1] ~= 'in-flight' or rec[2] ~= ARGV[1] then
  return 0
end
redis.call('DEL', key)
return 1
