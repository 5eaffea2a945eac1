-- wrk script for bench/api.py. Chosen by environment (wrk -t1, so one Lua state and one counter):
--   BENCH_MODE=get|list   plain GET of the URL's path
--   BENCH_MODE=create     POST $BENCH_BODY_FILE to $BENCH_PATH, "__NAME__" replaced by a fresh
--                          name per request ($BENCH_TAG .. counter), so every request creates
--   BENCH_MODE=patch      merge-patch pod p-0000..p-{BENCH_OBJECTS-1} under $BENCH_PATH in turn,
--                          setting label bench-flip to a value new on every pass ($BENCH_TAG .. pass)
--   BENCH_MODE=put        PUT $BENCH_BODY_FILE to $BENCH_PATH/<name>$BENCH_SUFFIX for the names
--                          $BENCH_NAME_FMT % 0..BENCH_OBJECTS-1 in turn, "__NAME__" replaced by the name and
--                          "__FLIP__" by a value new on every pass; "__RV__" (optimistic concurrency, as a
--                          controller writes) by the object's last resourceVersion: first from
--                          $BENCH_RV_FILE ("name rv" lines), then from each response's body
--   BENCH_TOKEN           if set, every request carries "Authorization: Bearer $BENCH_TOKEN"
-- done() prints one line: BENCH_JSON {...} with counts, bytes and latency percentiles in µs.

local mode = os.getenv("BENCH_MODE") or "get"
local path = os.getenv("BENCH_PATH")
local tag = os.getenv("BENCH_TAG") or "x"
local objects = tonumber(os.getenv("BENCH_OBJECTS") or "1000")
local counter = 0
local head, tail
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

if mode == "create" then
  local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
  local template = f:read("*a")
  f:close()
  local i, j = string.find(template, "__NAME__", 1, true)
  head, tail = string.sub(template, 1, i - 1), string.sub(template, j + 1)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
elseif mode == "patch" then
  wrk.method = "PATCH"
  wrk.headers["Content-Type"] = "application/merge-patch+json"
elseif mode == "put" then
  local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
  template = f:read("*a")
  f:close()
  wrk.method = "PUT"
  wrk.headers["Content-Type"] = "application/json"
end

local name_fmt = os.getenv("BENCH_NAME_FMT") or "p-%04d"
local suffix = os.getenv("BENCH_SUFFIX") or ""
local rvs = nil
if mode == "put" and string.find(template, "__RV__", 1, true) then
  rvs = {}
  for line in io.lines(os.getenv("BENCH_RV_FILE")) do
    local n, v = string.match(line, "^(%S+) (%S+)$")
    if n then rvs[n] = v end
  end
  response = function(status, headers, body)
    local n = string.match(body, '"name":"([^"]+)"')
    local v = string.match(body, '"resourceVersion":"(%d+)"')
    if n and v and rvs[n] then rvs[n] = v end
  end
end

if mode == "create" then
  request = function()
    counter = counter + 1
    return wrk.format(nil, path, nil, head .. tag .. counter .. tail)
  end
elseif mode == "patch" then
  request = function()
    local i = counter % objects
    local pass = math.floor(counter / objects)
    counter = counter + 1
    local body = '{"metadata":{"labels":{"bench-flip":"' .. tag .. pass .. '"}}}'
    return wrk.format(nil, string.format("%s/p-%04d", path, i), nil, body)
  end
elseif mode == "put" then
  request = function()
    local i = counter % objects
    local pass = math.floor(counter / objects)
    counter = counter + 1
    local name = string.format(name_fmt, i)
    local body = string.gsub(string.gsub(template, "__NAME__", name), "__FLIP__", tag .. pass)
    if rvs then body = string.gsub(body, "__RV__", rvs[name]) end
    return wrk.format(nil, path .. "/" .. name .. suffix, nil, body)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
