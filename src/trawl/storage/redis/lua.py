"""The frontier's Lua scripts: each runs on one host's shard (KEYS are one host's keys).

KEYS = host hash, URL records, queue, waiting [, the session's undo hash]. A URL
record is a JSON array whose numbers are strings (exact floats, Python's ``repr``):
``[url, depth, priority, status, due, attempts, reason, via, hops, etag,
last_modified, revisit, version, cash, history]`` (records written before priorities
were scores end at ``version``: cash 1, history 0). ``version`` grows at every
change of status: a session's undo entry is applied only if the record is still as
that session left it; an in-link's raise of cash and key does not count as one (a
rollback keeps the cash it brought, see ``ROLLBACK``).
The host hash holds ``next_at``, ``admitted``, ``budget``, ``priority``, ``demoted``,
the lease (``lease_fp``, ``lease_exp``, ``holder``) and ``s<status>`` URL counts.
A host's order in the schedule (``Keys.priorities``) is its best queued URL's key
plus its ``priority`` (``host_state``). Keys move as ``trawl.ranking`` says.
"""

from __future__ import annotations

from trawl.ranking import DEFERRED, FLOOR, SCALE

_PRELUDE = (
    f"""
local SCALE = {SCALE}
local FLOOR = {FLOOR!r}
local DEFERRED = {DEFERRED}
local BORDER = {DEFERRED // 2}
"""
    + r"""
local NONE = '\0'
local function nz(v) if v == NONE then return cjson.null end return v end
local function num(v, d)
  if v == nil or v == false or v == '' then return d end
  return tonumber(v)
end
local function put(K, fp, rec, old)
  rec[13] = tostring((tonumber(rec[13]) or 0) + 1)
  redis.call('HSET', K[2], fp, cjson.encode(rec))
  local st = rec[4]
  if old ~= st then
    if old == '0' then redis.call('ZREM', K[3], fp) end
    if old == '6' then redis.call('ZREM', K[4], fp) end
    if old then redis.call('HINCRBY', K[1], 's' .. old, -1) end
    redis.call('HINCRBY', K[1], 's' .. st, 1)
  end
  if st == '0' then redis.call('ZADD', K[3], rec[3], fp) end
  if st == '6' then redis.call('ZADD', K[4], rec[5], fp) end
end
local function snapshot(K, fp, current)
  if redis.call('HEXISTS', K[5], fp) == 0 then redis.call('HSET', K[5], fp, current) end
end
local function touched(K, fp, rec) redis.call('HSET', K[5], 'v:' .. fp, rec[13]) end
local function fmt(x) return string.format('%.17g', x) end
-- ranking.deferred_key and undeferred (keys are strings of integers below 2^53).
local function to_band(key)
  local k = tonumber(key)
  if k < BORDER then k = k + DEFERRED end
  return string.format('%d', k)
end
local function out_of_band(key)
  local k = tonumber(key)
  if k >= BORDER then k = k - DEFERRED end
  return k
end
local function cash(rec) return num(rec[14], 1), num(rec[15], 0) end
-- ranking.raised_key: the key of a URL whose importance grows by gain.
local function raised(key, importance, gain)
  if not (gain > 0) then return key end
  local x = gain / (math.max(0, importance) + FLOOR)
  local u = 1 + x
  local l = x
  if u ~= 1 then l = math.log(u) * x / (u - 1) end
  return string.format('%d', tonumber(key) - math.floor(l * SCALE + 0.5))
end
-- {queued, next_at, order (best queued key + host priority), holder}
local function host_state(K)
  local h = redis.call('HMGET', K[1], 'next_at', 'priority', 'holder')
  local top = redis.call('ZRANGE', K[3], 0, 0, 'WITHSCORES')
  local order = num(h[2], 0) + num(top[2], 0)
  return {redis.call('ZCARD', K[3]), h[1] or '0', string.format('%d', order), h[3] or ''}
end
"""
)

# ARGV: max_per_host ('' none), then per URL: n candidates, the candidates, url, record,
# gain. Returns per URL: the slot admitted, 'S' seen, 'R' seen and raised while queued,
# 'D' over budget, 'C' every candidate taken; then the host state (queued, next_at,
# order, holder).
ADD = (
    _PRELUDE
    + r"""
local budget = num(redis.call('HGET', KEYS[1], 'budget'), num(ARGV[1], nil))
local admitted = num(redis.call('HGET', KEYS[1], 'admitted'), 0)
local out = {}
local i = 2
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  local url, rec, gain = ARGV[i + n + 1], ARGV[i + n + 2], tonumber(ARGV[i + n + 3])
  local answer = 'C'
  for c = 1, n do
    local fp = ARGV[i + c]
    local stored = redis.call('HGET', KEYS[2], fp)
    if not stored then
      if budget and admitted >= budget then answer = 'D' else
        admitted = admitted + 1
        put(KEYS, fp, cjson.decode(rec), nil)
        answer = fp
      end
      break
    end
    local old = cjson.decode(stored)
    if old[1] == url then
      answer = 'S'
      local st = old[4]
      if gain > 0 and (st == '0' or st == '1' or st == '6') then
        -- An in-link: more cash, a better key; not a change of status (no version).
        local c0, h0 = cash(old)
        old[3] = raised(old[3], c0 + h0, gain)
        old[14], old[15] = fmt(c0 + gain), fmt(h0)
        redis.call('HSET', KEYS[2], fp, cjson.encode(old))
        if st == '0' then
          redis.call('ZADD', KEYS[3], old[3], fp)
          answer = 'R'
        end
      end
      break
    end
  end
  out[#out + 1] = answer
  i = i + n + 4
end
redis.call('HSET', KEYS[1], 'admitted', admitted)
local s = host_state(KEYS)
for _, v in ipairs(s) do out[#out + 1] = v end
return out
"""
)

# ARGV: now, expiry, holder; KEYS[5] the host's fetch records. Returns {'ok', fp, record,
# queued, the URL's fetch record or false} or {'busy'|'later', at} or {'empty'}.
TAKE = (
    _PRELUDE
    + r"""
local h = redis.call('HMGET', KEYS[1], 'holder', 'lease_exp', 'next_at')
if h[1] and h[1] ~= '' then return {'busy', h[2]} end
if num(h[3], 0) > tonumber(ARGV[1]) then return {'later', h[3]} end
local top = redis.call('ZRANGE', KEYS[3], 0, 0)
if #top == 0 then return {'empty'} end
local fp = top[1]
local rec = cjson.decode(redis.call('HGET', KEYS[2], fp))
local old = rec[4]
rec[4] = '1'
rec[5] = ARGV[2]
put(KEYS, fp, rec, old)
redis.call('HSET', KEYS[1], 'lease_fp', fp, 'lease_exp', ARGV[2], 'holder', ARGV[3])
return {'ok', fp, redis.call('HGET', KEYS[2], fp), redis.call('ZCARD', KEYS[3]),
  redis.call('HGET', KEYS[5], fp)}
"""
)

# The end of a lease. ARGV: fp, expiry, kind (f finish, r retry, q requeue, d requeue
# deferred: its key into the deferred band), status, host_ready_at, reason, etag,
# last_modified, due, the lease's cash (passed on when the status is fetched or
# redirected). A lease no longer held changes nothing.
# Returns {old status, new status, queued, order} or {'late'}.
FINISH = (
    _PRELUDE
    + r"""
local fp = ARGV[1]
local h = redis.call('HMGET', KEYS[1], 'lease_fp', 'lease_exp')
if h[1] ~= fp or h[2] ~= ARGV[2] then return {'late'} end
local current = redis.call('HGET', KEYS[2], fp)
local rec = cjson.decode(current)
snapshot(KEYS, fp, current)
local old, kind = rec[4], ARGV[3]
if kind == 'f' then
  rec[4], rec[5], rec[7] = ARGV[4], cjson.null, nz(ARGV[6])
  rec[10], rec[11] = nz(ARGV[7]), nz(ARGV[8])
  rec[6] = tostring(tonumber(rec[6]) + 1)
  local c0, h0 = cash(rec)
  local passed = 0
  if ARGV[4] == '2' or ARGV[4] == '7' then passed = tonumber(ARGV[10]) end
  rec[14], rec[15] = fmt(math.max(0, c0 - passed)), fmt(h0 + passed)
elseif kind == 'r' then
  rec[4], rec[5], rec[7] = '6', ARGV[9], nz(ARGV[6])
  rec[6] = tostring(tonumber(rec[6]) + 1)
else
  rec[4], rec[5] = '0', cjson.null
  if kind == 'd' then rec[3] = to_band(rec[3]) end
end
put(KEYS, fp, rec, old)
touched(KEYS, fp, rec)
redis.call('HDEL', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
redis.call('HSET', KEYS[1], 'next_at', ARGV[5])
local s = host_state(KEYS)
return {old, rec[4], s[1], s[3]}
"""
)

# A later stage's outcome, or a revisit (a URL waiting for its revisit only brought
# forward). ARGV: fp, kind (s status, v revisit), status, reason, due, interval, key
# shift (revisit). Returns the host's next_at, admitted, budget, priority, demoted,
# holder and queued count, then {old, new}, {'active', old}, or nothing.
SET_STATUS = (
    _PRELUDE
    + r"""
local out = redis.call('HMGET', KEYS[1], 'next_at', 'admitted', 'budget', 'priority',
  'demoted', 'holder')
out[7] = redis.call('ZCARD', KEYS[3])
local fp = ARGV[1]
local current = redis.call('HGET', KEYS[2], fp)
if not current then return out end
local rec = cjson.decode(current)
local old = rec[4]
local active = old == '0' or old == '1' or old == '6'
if ARGV[2] == 's' then
  if old == ARGV[3] then return out end
  if active then out[8], out[9] = 'active', old return out end
  snapshot(KEYS, fp, current)
  rec[4], rec[7] = ARGV[3], nz(ARGV[4])
else
  if old == '6' and rec[7] == 'revisit' then
    if tonumber(ARGV[5]) >= tonumber(rec[5]) then return out end
    snapshot(KEYS, fp, current)
    rec[5] = ARGV[5]
    put(KEYS, fp, rec, old)
    touched(KEYS, fp, rec)
    out[8], out[9] = old, old
    return out
  end
  if active then return out end
  snapshot(KEYS, fp, current)
  rec[4], rec[5], rec[12], rec[6], rec[7] = '6', ARGV[5], ARGV[6], '0', 'revisit'
  rec[3] = string.format('%d', out_of_band(rec[3]) + tonumber(ARGV[7]))
end
put(KEYS, fp, rec, old)
touched(KEYS, fp, rec)
out[8], out[9] = old, rec[4]
return out
"""
)

# Waiting URLs due by ARGV[1] queued again. Returns {woken, earliest due left or '',
# queued, next_at, order, holder}.
WAKE = (
    _PRELUDE
    + r"""
local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
for _, fp in ipairs(due) do
  local rec = cjson.decode(redis.call('HGET', KEYS[2], fp))
  local old = rec[4]
  rec[4], rec[5] = '0', cjson.null
  put(KEYS, fp, rec, old)
end
local left = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
local out = {#due, left[2] or ''}
for _, v in ipairs(host_state(KEYS)) do out[#out + 1] = v end
return out
"""
)

# A host's turn taken for a request that is none of its URLs (a hold: no lease_fp).
# ARGV: now, expiry, holder. Returns {'ok'} or {'busy', lease expiry} or {'later', next_at}.
HOLD = r"""
local h = redis.call('HMGET', KEYS[1], 'holder', 'lease_exp', 'next_at')
if h[1] and h[1] ~= '' then return {'busy', h[2]} end
if tonumber(h[3] or '0') > tonumber(ARGV[1]) then return {'later', h[3]} end
redis.call('HSET', KEYS[1], 'lease_fp', '', 'lease_exp', ARGV[2], 'holder', ARGV[3])
return {'ok'}
"""

# The end of a hold. ARGV: holder, expiry, host_ready_at. Returns {queued, order}, or
# {} when the hold is no longer this holder's (it expired).
RELEASE = (
    _PRELUDE
    + r"""
local h = redis.call('HMGET', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
if h[1] ~= '' or h[2] ~= ARGV[2] or h[3] ~= ARGV[1] then return {} end
redis.call('HDEL', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
redis.call('HSET', KEYS[1], 'next_at', ARGV[3])
local s = host_state(KEYS)
return {s[1], s[3]}
"""
)

# An expired lease (expiry <= ARGV[1]) given back. Returns {1, queued, next_at, order}
# when a URL was reclaimed, {0, expiry} for a live lease, {2, queued, next_at, order}
# for none: an expired hold of the host's turn (no URL), or a stale lease index (a claim
# whose take never came, a finish not yet indexed).
RECLAIM = (
    _PRELUDE
    + r"""
local h = redis.call('HMGET', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
if not h[3] or h[3] == '' then
  local s = host_state(KEYS)
  return {2, s[1], s[2], s[3]}
end
if tonumber(h[2]) > tonumber(ARGV[1]) then return {0, h[2]} end
if h[1] == '' then
  redis.call('HDEL', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
  local s = host_state(KEYS)
  return {2, s[1], s[2], s[3]}
end
local current = redis.call('HGET', KEYS[2], h[1])
if current then
  local rec = cjson.decode(current)
  if rec[4] == '1' and rec[5] == h[2] then
    rec[4], rec[5] = '0', cjson.null
    put(KEYS, h[1], rec, '1')
  end
end
redis.call('HDEL', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
local s = host_state(KEYS)
return {1, s[1], s[2], s[3]}
"""
)

# A crashed session's uncommitted changes undone, its lease given back. ARGV: holder.
# A restored record keeps the cash in-links brought since it was saved (and the key
# they raised). Returns {queued, next_at, order, URLs in flight given back, old1, new1,
# ...}.
ROLLBACK = (
    _PRELUDE
    + r"""
local moves, given = {}, 0
local undo = redis.call('HGETALL', KEYS[5])
local versions = {}
for i = 1, #undo, 2 do
  if string.sub(undo[i], 1, 2) == 'v:' then versions[string.sub(undo[i], 3)] = undo[i + 1] end
end
for i = 1, #undo, 2 do
  local fp = undo[i]
  if string.sub(fp, 1, 2) ~= 'v:' then
    local current = redis.call('HGET', KEYS[2], fp)
    if current and undo[i + 1] ~= '' then
      local rec = cjson.decode(current)
      if rec[13] == versions[fp] then
        local back = cjson.decode(undo[i + 1])
        if back[4] == '1' then back[4], back[5], given = '0', cjson.null, given + 1 end
        local c1, h1 = cash(rec)
        local c0, h0 = cash(back)
        local gain = (c1 + h1) - (c0 + h0)
        back[3] = raised(back[3], c0 + h0, gain)
        back[14], back[15] = fmt(c1 + h1 - h0), fmt(h0)
        back[13] = rec[13]
        put(KEYS, fp, back, rec[4])
        moves[#moves + 1] = rec[4]
        moves[#moves + 1] = back[4]
      end
    end
  end
end
redis.call('DEL', KEYS[5])
local h = redis.call('HMGET', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
if h[3] == ARGV[1] then
  local current = redis.call('HGET', KEYS[2], h[1])
  if current then
    local rec = cjson.decode(current)
    if rec[4] == '1' then
      rec[4], rec[5] = '0', cjson.null
      put(KEYS, h[1], rec, '1')
      moves[#moves + 1] = '1'
      moves[#moves + 1] = '0'
      given = given + 1
    end
  end
  redis.call('HDEL', KEYS[1], 'lease_fp', 'lease_exp', 'holder')
end
local s = host_state(KEYS)
local out = {s[1], s[2], s[3], given}
for _, v in ipairs(moves) do out[#out + 1] = v end
return out
"""
)

# A look at a bucket: KEYS sched, prio, wait, lease; ARGV now, how many. Returns the
# earliest score after now in the schedule, the earliest in the waiting and lease
# indexes ('' when none), how many hosts are due, then the best due hosts (order: the
# best queued key plus the host's priority, then time): {host, score, order, ...}.
PEEK = r"""
local out = {}
local after = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES',
  'LIMIT', 0, 1)
out[1] = after[2] or ''
for k = 3, 4 do
  local first = redis.call('ZRANGE', KEYS[k], 0, 0, 'WITHSCORES')
  out[#out + 1] = first[2] or ''
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, 256)
out[4] = #due / 2
local found = {}
for i = 1, #due, 2 do
  local p = tonumber(redis.call('HGET', KEYS[2], due[i]) or '0')
  found[#found + 1] = {p, tonumber(due[i + 1]), due[i]}
end
table.sort(found, function(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[3] < b[3]
end)
for i = 1, math.min(#found, tonumber(ARGV[2])) do
  out[#out + 1] = found[i][3]
  out[#out + 1] = tostring(found[i][2])
  out[#out + 1] = tostring(found[i][1])
end
return out
"""

# Claim a host of a bucket if still due: it moves from the schedule to the lease index
# (so no other worker claims it). KEYS sched, lease; ARGV host, now, until. 1 or 0.
CLAIM = r"""
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) > tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"""
