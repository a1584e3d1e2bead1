-- Claims an idempotency key. Runs atomically (one script is one critical section in Redis), so of
-- any number of concurrent claims of a fresh key exactly one is answered 'claimed'.
--
-- KEYS[1]  the record's hash key
-- ARGV[1]  argument fingerprint
-- ARGV[2]  claimant (owner id)
-- ARGV[3]  lease length, whole milliseconds > 0
-- ARGV[4]  how long an abandoned in-flight marker is kept after its lease, whole milliseconds > 0
--
-- Returns one of
--   {'claimed', leaseExpiresAtMs}
--   {'taken-over', previousOwner, leaseExpiresAtMs}   lease ran out without complete/release
--   {'in-flight', owner, leaseExpiresAtMs}            another claim holds a live lease
--   {'completed', storedJson}
--   {'conflict', storedFingerprint}                   same key, other arguments (in flight or done)
--
-- Record fields: state ('in-flight' | 'completed'), fp, owner, lease (epoch ms), stored (JSON).
-- Time is the Redis server's (TIME), so leases written by different executors are compared on one
-- clock. A completed record expires with the key's TTL (set by complete), so it simply disappears.

if redis.replicate_commands then redis.replicate_commands() end -- needed before Redis 5 for TIME + writes

local key = KEYS[1]
local fingerprint = ARGV[1]
local owner = ARGV[2]
local lease_ms = tonumber(ARGV[3])
local retention_ms = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_expires = now + lease_ms

local function take(previous_owner)
  redis.call('HSET', key, 'state', 'in-flight', 'fp', fingerprint, 'owner', owner,
    'lease', string.format('%.0f', lease_expires))
  redis.call('HDEL', key, 'stored')
  redis.call('PEXPIRE', key, lease_ms + retention_ms)
  if previous_owner then
    return {'taken-over', previous_owner, lease_expires}
  end
  return {'claimed', lease_expires}
end

local rec = redis.call('HMGET', key, 'state', 'fp', 'owner', 'lease', 'stored')
local state, stored_fp, current_owner, current_lease, stored = rec[1], rec[2], rec[3], rec[4], rec[5]

if not state then
  return take(nil)
end
if stored_fp ~= fingerprint then
  return {'conflict', stored_fp}
end
if state == 'completed' then
  return {'completed', stored}
end
local current_lease_ms = tonumber(current_lease)
if current_lease_ms > now then
  return {'in-flight', current_owner, current_lease_ms}
end
return take(current_owner)
