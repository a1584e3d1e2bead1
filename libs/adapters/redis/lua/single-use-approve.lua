-- Records the approval of a single-use id; the first approval wins.
--
-- KEYS[1]  the id's approval hash key
-- ARGV[1]  approver
-- ARGV[2]  how long the approval is kept, whole milliseconds > 0
--
-- Returns {approver, approvedAtMs} of the approval in force: the one just written, or the earlier
-- one left unchanged. approvedAtMs is the Redis server's TIME (as a decimal string), so approvals
-- written through different executors share one clock.

if redis.replicate_commands then redis.replicate_commands() end -- needed before Redis 5 for TIME + writes

if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  -- Built as text: Lua 5.1 numbers print epoch milliseconds in exponent form.
  local now_ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
  redis.call('HSET', KEYS[1], 'approver', ARGV[1], 'at', now_ms)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return redis.call('HMGET', KEYS[1], 'approver', 'at')
