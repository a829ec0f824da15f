-- wrk script for bench/wan.py's OTLP upstream: POST /v1/traces of the protobuf export in BODY_FILE (one span of
-- about 1 KiB, made by bench/wan.py), every request its own Idempotency-Key (RUN_ID keeps runs apart).
local file = assert(io.open(os.getenv("BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/x-protobuf"

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
