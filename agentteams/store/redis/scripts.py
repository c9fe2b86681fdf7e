"""The Lua scripts the Redis store runs server-side, each atomic: task create, claim and claim-next (a lease with a
fencing token granted), complete (refused to a stale token), delete, lease renewal and the sweep of run-out leases."""

# A task is a hash: `doc` (its JSON without the fields below), `owner`, `status`, `blocks`/`blocked_by` (ids,
# space-separated) and the lease: `token`, `lease_owner`, `expires` (epoch ms), `seconds`, `taken_from`, `taken_at`.

from __future__ import annotations

# Every script gets the team's key prefix as ARGV[1] and builds the team's other key names from it: all of them
# share the prefix's hash tag, so they live on one cluster shard with the key passed in KEYS.
_COMMON = """
local P = ARGV[1]
local function task(id) return P .. 'task:' .. id end
local function words(s)
  local t = {}
  for w in string.gmatch(s or '', '%S+') do t[#t + 1] = w end
  return t
end
local function has(s, id)
  for _, w in ipairs(words(s)) do if w == id then return true end end
  return false
end
local function without(s, id)
  local t = {}
  for _, w in ipairs(words(s)) do if w ~= id then t[#t + 1] = w end end
  return table.concat(t, ' ')
end
local function resolved(st) return st == 'completed' or st == 'deleted' end
local function event(op, id, who)
  redis.call('XADD', P .. 'events', 'MAXLEN', '~', 1000, '*', 'op', op, 'task', id, 'by', who)
end
local function busy_with(agent, except)
  local busy = {}
  for _, other in ipairs(redis.call('ZRANGE', P .. 'tasks', 0, -1)) do
    local o = redis.call('HMGET', task(other), 'owner', 'status')
    if other ~= except and o[1] == agent and not resolved(o[2]) then busy[#busy + 1] = other end
  end
  return busy
end
-- the claim's write: owner, in_progress, and a lease (a new fencing token unless the agent holds it already)
local function grant(id, agent, secs_text, now)
  local k = task(id)
  local f = redis.call('HMGET', k, 'owner', 'token', 'lease_owner')
  local token = tonumber(f[2] or '0')
  if not (f[1] == agent and f[3] == agent) then token = token + 1 end
  local secs = tonumber(secs_text)
  redis.call('HSET', k, 'owner', agent, 'status', 'in_progress', 'token', token, 'lease_owner', agent,
    'expires', now + math.floor(secs * 1000), 'seconds', secs_text)
  event('claim', id, agent)
  return {'ok', tostring(token), id}
end
"""

# KEYS[1] the id counter; ARGV: prefix, doc, blockers
CREATE = """
for _, b in ipairs(words(ARGV[3])) do
  if redis.call('EXISTS', task(b)) == 0 then return {'missing', b} end
end
local id = tostring(redis.call('INCR', KEYS[1]))
redis.call('HSET', task(id), 'doc', ARGV[2], 'owner', '', 'status', 'pending', 'blocks', '', 'blocked_by', ARGV[3])
redis.call('ZADD', P .. 'tasks', tonumber(id), id)
for _, b in ipairs(words(ARGV[3])) do
  local cur = redis.call('HGET', task(b), 'blocks') or ''
  if not has(cur, id) then redis.call('HSET', task(b), 'blocks', ((cur .. ' ' .. id):gsub('^ ', ''))) end
end
event('create', id, '')
return {'ok', id}
"""

# KEYS[1] the task; ARGV: prefix, id, agent, check_busy (1/0), lease seconds, now (epoch ms)
CLAIM = """
local k, id, agent = KEYS[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', k) == 0 then return {'task_not_found'} end
local f = redis.call('HMGET', k, 'owner', 'status', 'blocked_by')
if f[1] and f[1] ~= '' and f[1] ~= agent then return {'already_claimed'} end
if resolved(f[2]) then return {'already_resolved'} end
for _, d in ipairs(words(f[3])) do
  local st = redis.call('HGET', task(d), 'status')
  if st and not resolved(st) then return {'blocked'} end
end
if ARGV[4] == '1' then
  local busy = busy_with(agent, id)
  if #busy > 0 then return {'agent_busy', unpack(busy)} end
end
return grant(id, agent, ARGV[5], tonumber(ARGV[6]))
"""

# KEYS[1] the task index; ARGV: prefix, agent, check_busy (1/0), lease seconds, now. The lowest-id pending,
# unowned task whose blockers are all resolved, claimed in the same step: claimers never race for one task. One pass
# over the tasks: with check_busy it goes on past the pick, gathering the agent's open tasks on the way.
CLAIM_NEXT = """
local agent, check = ARGV[2], ARGV[3] == '1'
local pick, busy = nil, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local f = redis.call('HMGET', task(id), 'owner', 'status', 'blocked_by')
  if check and f[1] == agent and not resolved(f[2]) then busy[#busy + 1] = id end
  if not pick and f[2] == 'pending' and (not f[1] or f[1] == '') then
    local free = true
    for _, d in ipairs(words(f[3])) do
      local st = redis.call('HGET', task(d), 'status')
      if st and not resolved(st) then free = false; break end
    end
    if free then
      pick = id
      if not check then break end
    end
  end
end
if not pick then return {'task_not_found'} end
if #busy > 0 then return {'agent_busy', pick, unpack(busy)} end
return grant(pick, agent, ARGV[4], tonumber(ARGV[5]))
"""

# KEYS[1] the task; ARGV: prefix, id, caller, the token the caller holds ('' when none)
COMPLETE = """
local k = KEYS[1]
if redis.call('EXISTS', k) == 0 then return {'task_not_found'} end
local f = redis.call('HMGET', k, 'status', 'token', 'lease_owner')
if ARGV[4] ~= '' and f[2] and (f[2] ~= ARGV[4] or (f[3] or '') ~= ARGV[3]) then return {'lease_lost'} end
if f[1] == 'completed' then return {'unchanged'} end
redis.call('HSET', k, 'status', 'completed')
event('complete', ARGV[2], ARGV[3])
return {'ok'}
"""

# KEYS[1] the task; ARGV: prefix, id. Returns the task's hash as it was (flat), or nothing when missing.
DELETE = """
local k, id = KEYS[1], ARGV[2]
if redis.call('EXISTS', k) == 0 then return {} end
local was = redis.call('HGETALL', k)
redis.call('DEL', k)
redis.call('ZREM', P .. 'tasks', id)
for _, other in ipairs(redis.call('ZRANGE', P .. 'tasks', 0, -1)) do
  local o = redis.call('HMGET', task(other), 'blocks', 'blocked_by')
  if has(o[1], id) or has(o[2], id) then
    redis.call('HSET', task(other), 'blocks', without(o[1], id), 'blocked_by', without(o[2], id))
  end
end
event('delete', id, '')
return was
"""

# KEYS[1] the task index; ARGV: prefix, agent, lease seconds, now. Returns id, token, granted (1/0) triples.
RENEW = """
local agent, secs, now = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local k = task(id)
  local f = redis.call('HMGET', k, 'owner', 'status', 'token', 'lease_owner', 'expires')
  if f[1] == agent and not resolved(f[2]) then
    local token = tonumber(f[3] or '0')
    if not f[3] or f[4] ~= agent then
      token = token + 1
      redis.call('HSET', k, 'token', token, 'lease_owner', agent, 'expires', now + math.floor(secs * 1000),
        'seconds', ARGV[3])
      out[#out + 1] = id; out[#out + 1] = tostring(token); out[#out + 1] = '1'
    else
      if tonumber(f[5] or '0') - now <= secs * 500 then
        redis.call('HSET', k, 'expires', now + math.floor(secs * 1000), 'seconds', ARGV[3])
      end
      out[#out + 1] = id; out[#out + 1] = tostring(token); out[#out + 1] = '0'
    end
  end
end
return out
"""

# KEYS[1] the task index; ARGV: prefix, now. Only an owner of ours (it wrote a presence record, expired or not, and
# never removed it) loses a task this way.
SWEEP = """
local now = tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local k = task(id)
  local f = redis.call('HMGET', k, 'owner', 'status', 'lease_owner', 'expires', 'seconds')
  local holder = f[3]
  if holder and holder ~= '' and holder == f[1] and not resolved(f[2]) and tonumber(f[4] or '0') <= now
      and redis.call('SISMEMBER', P .. 'ours', holder) == 1 then
    redis.call('HSET', k, 'owner', '', 'status', 'pending', 'lease_owner', '', 'expires', 0,
      'taken_from', holder, 'taken_at', now)
    event('taken_back', id, holder)
    out[#out + 1] = id; out[#out + 1] = holder; out[#out + 1] = f[5] or '60'
  end
end
return out
"""

SCRIPTS = {
    "create": CREATE,
    "claim": CLAIM,
    "claim_next": CLAIM_NEXT,
    "complete": COMPLETE,
    "delete": DELETE,
    "renew": RENEW,
    "sweep": SWEEP,
}


def source(name: str) -> str:
    """A script's full text: the shared helpers, then its body."""
    return _COMMON + SCRIPTS[name]
