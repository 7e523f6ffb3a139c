-- wrk script: MCP tools/call requests over streamable HTTP, keep-alive.
--
--   wrk -t N -c N -s mcp_call.lua URL -- BODIES_FILE PROTOCOL_VERSION SID_1 ... SID_N
--
-- BODIES_FILE: one JSON-RPC tools/call request per line (drive.py bodies).
-- Each wrk thread drives one connection and one MCP session (SID_k, opened
-- and initialized beforehand by drive.py sessions; "-" for a stateless
-- server), cycling through the bodies from a per-thread offset. Run with
-- -t equal to -c, so thread k's single connection carries session k.
--
-- A response counts as bad unless it is HTTP 200 and carries a JSON-RPC
-- "result" that is not a tool error; wrk itself only counts non-2xx.

local threads = {}
local next_id = 1

function setup(thread)
  thread:set("thread_no", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1], "r"))
  local bodies = {}
  for line in f:lines() do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  f:close()
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = args[2],
  }
  local sid = args[2 + thread_no]
  if sid ~= nil and sid ~= "" and sid ~= "-" then
    headers["Mcp-Session-Id"] = sid
  end
  -- Pre-format every request once: request() then costs a table lookup.
  reqs = {}
  for i, body in ipairs(bodies) do
    reqs[i] = wrk.format("POST", nil, headers, body)
  end
  n = (thread_no * 7) % #reqs  -- threads start at different calls of the mix
  bad = 0
end

function request()
  n = n + 1
  return reqs[(n - 1) % #reqs + 1]
end

function response(status, headers, body)
  if status ~= 200
    or not string.find(body, '"result"', 1, true)
    or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do
    b = b + (t:get("bad") or 0)
  end
  local e = summary.errors
  -- One machine-readable line for wrk_bench.py; wrk's own report stays above it.
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"bad":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p99_9":%d}}\n',
    summary.requests, summary.duration, summary.bytes, b,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
