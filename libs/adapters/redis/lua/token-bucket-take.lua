-- Takes `cost` tokens from a token bucket, atomically, on the Redis server's clock (TIME), so every
-- executor using this Redis shares one budget and one notion of time.
--
-- KEYS[1]  the bucket's hash key
-- ARGV[1]  capacity (tokens, > 0)
-- ARGV[2]  refill rate (tokens per second, > 0)
-- ARGV[3]  cost (tokens, > 0 and <= capacity)
--
-- Returns {allowed (1|0), remaining whole tokens (0 when refused), retryAfterMs (0 when allowed)}.
-- retryAfterMs is the time until `cost` tokens will be available, rounded up to a whole millisecond.
--
-- Fields: tokens (fractional count), at (epoch ms, fractional) = when `tokens` was computed. An
-- absent bucket is full; the key expires once the idle bucket would be full again, which is the same.
-- `at` never moves backwards, so no interval is credited twice.

if redis.replicate_commands then redis.replicate_commands() end -- needed before Redis 5 for TIME + writes

local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000

local rec = redis.call('HMGET', key, 'tokens', 'at')
local tokens = capacity
local at = now
if rec[1] then
  local last = tonumber(rec[2])
  if last > now then at = last end
  tokens = math.min(capacity, tonumber(rec[1]) + (at - last) * rate / 1000)
end

local allowed, remaining, retry_after = 0, 0, 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
  remaining = math.floor(tokens)
else
  retry_after = math.ceil((cost - tokens) * 1000 / rate)
end

redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
-- Idle until full again, plus a second of slack; after that the absent key means the same thing.
redis.call('PEXPIRE', key, math.ceil((at - now) + (capacity - tokens) * 1000 / rate) + 1000)
return {allowed, remaining, retry_after}
