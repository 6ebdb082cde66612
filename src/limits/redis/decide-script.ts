/**
 * One limiter decision as one Lua script, so Redis runs it atomically: refill the subject's
 * bucket, roll its day quota over at UTC midnight, take one request if both windows allow it,
 * and (for a refusal that counts toward bans) count it and restart the count when it crosses the
 * threshold. It mirrors `RateLimiter.decide` step for step, with the same floating-point
 * operations in the same order; the caller builds the Decision from what it returns with the
 * local limiter's own `decisionOf`, so headers and Retry-After agree by construction.
 *
 * Time is the gateway's clock (`now`, epoch ms), not Redis's: the headers a process sends are
 * computed from its own clock, and a controlled clock makes tests exact. Processes whose clocks
 * disagree never refill a bucket twice (`at` only moves forward) and never reopen a day another
 * process has already started.
 *
 * KEYS[1] hash {t: tokens, at: epoch ms of the last refill, d: UTC day number, u: used that day}
 * KEYS[2] list of the epoch ms of recent refusals
 * ARGV    now, perMinute, perDay (-1: no day window), consume (1/0), refusal window ms (0: do
 *         not count), ban threshold
 * Returns {minuteOk 1/0, dayOk 1/0, tokens (a %.17g string, exact), used (-1: no day window),
 *         startsBan 1/0}
 *
 * Both keys expire when idle: the hash once its bucket is full again and its day is over (a
 * missing hash is a full bucket and an unused day), the list once its newest refusal has left
 * the window. Expiry is relative (PEXPIRE), because Redis's clock is not the gateway's.
 */
export const DECIDE_SCRIPT = `
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local perDay = tonumber(ARGV[3])
local consume = ARGV[4] == '1'
local windowMs = tonumber(ARGV[5])
local threshold = tonumber(ARGV[6])

local s = redis.call('HMGET', KEYS[1], 't', 'at', 'd', 'u')
local tokens = cap
local at = now
if s[1] then
  tokens = tonumber(s[1])
  at = tonumber(s[2])
  if now > at then
    tokens = math.min(cap, tokens + (now - at) * (cap / 60000))
    at = now
  end
end

local day = math.floor(now / 86400000)
local used = 0
if perDay >= 0 and s[3] then
  local storedDay = tonumber(s[3])
  if storedDay >= day then
    day = storedDay
    used = tonumber(s[4])
  end
end

local minuteOk = tokens >= 1
local dayOk = perDay < 0 or used < perDay
if consume and minuteOk and dayOk then
  tokens = tokens - 1
  used = used + 1
end

local t = string.format('%.17g', tokens)
local ttl = math.ceil((cap - tokens) * 60000 / cap) + (at - now)
if perDay >= 0 then
  redis.call('HSET', KEYS[1], 't', t, 'at', string.format('%.17g', at), 'd', string.format('%.17g', day), 'u', string.format('%.17g', used))
  if used > 0 then
    ttl = math.max(ttl, (day + 1) * 86400000 - now)
  end
else
  redis.call('HSET', KEYS[1], 't', t, 'at', string.format('%.17g', at))
end
redis.call('PEXPIRE', KEYS[1], math.max(1, ttl) + 1000)

local startsBan = 0
if consume and windowMs > 0 and not (minuteOk and dayOk) then
  local kept = {}
  local recent = redis.call('LRANGE', KEYS[2], 0, -1)
  for i = 1, #recent do
    if tonumber(recent[i]) > now - windowMs then
      kept[#kept + 1] = recent[i]
    end
  end
  kept[#kept + 1] = string.format('%.17g', now)
  redis.call('DEL', KEYS[2])
  if #kept > threshold then
    startsBan = 1
  else
    redis.call('RPUSH', KEYS[2], unpack(kept))
    redis.call('PEXPIRE', KEYS[2], windowMs + 1000)
  end
end

return {minuteOk and 1 or 0, dayOk and 1 or 0, t, perDay >= 0 and used or -1, startsBan}
`;
