-- Records one call's contribution to one series of an aggregate fact, at most once per call id, and
-- drops the series' contributions that fell out of the window. One script is one critical section in
-- Redis, so of any number of concurrent records of one call exactly one adds.
--
-- KEYS[1]  the series' sorted set: member = call id, score = atMs of its contribution
-- KEYS[2]  the series' hash: field = call id, value = its units (a decimal integer)
-- ARGV[1]  call id
-- ARGV[2]  units (a safe integer)
-- ARGV[3]  atMs: when the call's effect settled
-- ARGV[4]  drop bound: the series' contributions with atMs <= ARGV[4] are deleted
-- ARGV[5]  expiry, whole milliseconds > 0: both keys live at least this long from now
--
-- Returns 1 when the contribution was added, 0 when the series already held one of this call (left
-- unchanged). Both keys always hold the same call ids and carry the same TTL, which only grows, so
-- an idle series vanishes whole once every contribution is out of its window.

local added = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  added = 1
end

local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[4])
if #old > 0 then
  -- In slices: unpack of thousands of values overflows the Lua stack.
  for first = 1, #old, 1000 do
    redis.call('HDEL', KEYS[2], unpack(old, first, math.min(first + 999, #old)))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[4])
end

local expiry = tonumber(ARGV[5])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < expiry then redis.call('PEXPIRE', key, expiry) end
end
return added
