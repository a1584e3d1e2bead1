-- Marks a single-use id used. One script is one critical section in Redis, so of any number of
-- concurrent consumers of a fresh id exactly one is answered 1.
--
-- KEYS[1]  the id's key
-- ARGV[1]  holder: the logical call consuming (e.g. its idempotency key); '' for none
-- ARGV[2]  how long the id is remembered, whole milliseconds > 0
--
-- Returns 1 ('consumed') when the id was free (it is now held by ARGV[1] for ARGV[2] ms) or is
-- already held by the same non-empty holder (a retry of one logical call; the ttl is not extended);
-- 0 ('already-used') otherwise.

if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0
