wrk.method = "POST"
local events = {}
for i = 1, 10 do events[i] = string.format('{"n":%d,"msg":"%s"}', i, string.rep("x", 80)) end
wrk.body = '{"events":[' .. table.concat(events, ",") .. ']}'
wrk.headers["Content-Type"] = "application/json"
