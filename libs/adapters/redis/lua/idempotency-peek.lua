-- Reads an idempotency record without changing it: no write, no expiry moved (HMGET and TIME only),
-- so a claim after a peek answers exactly as it would have without it.
--
-- KEYS[1]  the record's hash key
--
-- Returns one of
--   {'absent'}                                         no live record (never claimed, released, expired)
--   {'in-flight', fp, owner, leaseExpiresAtMs, expired}  expired is 1 when the lease ran out, else 0
--   {'completed', fp, storedJson}
--
-- The lease is judged on the Redis server's clock (TIME), as the claim script judges it. A record
-- past its TTL is gone (the key's own expiry), so it reads as absent.

local rec = redis.call('HMGET', KEYS[1], 'state', 'fp', 'owner', 'lease', 'stored')
local state, fp, owner, lease, stored = rec[1], rec[2], rec[3], rec[4], rec[5]

if not state then
  return {'absent'}
end
if state == 'completed' then
  return {'completed', fp, stored}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_ms = tonumber(lease)
local expired = 0
if lease_ms <= now then
  expired = 1
end
return {'in-flight', fp, owner, lease_ms, expired}
