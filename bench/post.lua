-- wrk script for every POST subject of bench/run.sh: a JSON native batch of BODY_BYTES bytes (default 1024), or
-- with BODY_FILE that file's bytes as an OTLP export of BODY_TYPE (bench/wan.py's OTLP upstreams), optionally paced
-- (DELAY_MS between a connection's answer and its next request), and one JSON line of results.
local size = tonumber(os.getenv("BODY_BYTES") or "1024")
local pause = tonumber(os.getenv("DELAY_MS") or "0")
local body_file = os.getenv("BODY_FILE") or ""

wrk.method = "POST"
if body_file ~= "" then
  local file = assert(io.open(body_file, "rb"))
  wrk.body = file:read("*a")
  file:close()
  wrk.headers["Content-Type"] = os.getenv("BODY_TYPE") or "application/x-protobuf"
else
  local head = '{"events":[{"bench":true,"pad":"'
  local tail = '"}]}'
  wrk.body = head .. string.rep("x", size - #head - #tail) .. tail
  wrk.headers["Content-Type"] = "application/json"
end

-- UNIQUE_KEYS=1: every request its own Idempotency-Key (the collector stores each once), RUN_ID keeps runs apart.
if os.getenv("UNIQUE_KEYS") == "1" then
  local threads = 0
  function setup(thread)
    thread:set("id", threads)
    threads = threads + 1
  end
  local sent = 0
  function request()
    sent = sent + 1
    wrk.headers["Idempotency-Key"] = (os.getenv("RUN_ID") or "run") .. "-" .. id .. "-" .. sent
    return wrk.format()
  end
end

if pause > 0 then
  function delay() return pause end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f,"max_ms":%.3f,' ..
    '"socket_errors":%d,"non2xx":%d}\n',
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
