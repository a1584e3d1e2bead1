-- Sums one series of an aggregate fact over a window. Read-only: it drops nothing and moves no
-- expiry, so a sum can be repeated, audited and replayed.
--
-- KEYS[1]  the series' sorted set: member = call id, score = atMs of its contribution
-- KEYS[2]  the series' hash: field = call id, value = its units (a decimal integer)
-- ARGV[1]  the window's start: contributions with atMs > ARGV[1] count
-- ARGV[2]  optional: a call id whose contribution is left out (the call being judged)
--
-- Returns the sum of the units of those contributions, an integer (0 for a series never recorded).
-- A call id whose units are missing is being expired with its series (both keys carry one TTL) and
-- counts as absent.

local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')
local total = 0
-- In slices: unpack of thousands of values overflows the Lua stack.
for first = 1, #ids, 1000 do
  local units = redis.call('HMGET', KEYS[2], unpack(ids, first, math.min(first + 999, #ids)))
  for i = 1, #units do
    if units[i] then total = total + tonumber(units[i]) end
  end
end
if ARGV[2] then
  local own = redis.call('ZSCORE', KEYS[1], ARGV[2])
  if own and tonumber(own) > tonumber(ARGV[1]) then
    local ownUnits = redis.call('HGET', KEYS[2], ARGV[2])
    if ownUnits then total = total - tonumber(ownUnits) end
  end
end
return total
