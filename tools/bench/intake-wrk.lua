-- wrk posting prepared batches, each once (tools/bench/intake; bodies from intake-load.py prepare):
--   wrk -t T -c N -d 600s -s intake-wrk.lua URL -- BODIES T KIND [SECRET]
-- KIND: intake (gzip JSON Lines, Authorization, X-Navlog-Session) or journal (journal export format).
-- Thread k sends batches k, k+T, k+2T, … and stops when all of its batches are answered, so every
-- batch goes once: nothing is a duplicate, the server stores every event it is given. Each
-- thread prints its counts at the end ("wrk-thread ok=… events=… failed=… statuses=…").

local counter = 0
local threads = {}

-- A wall clock (CLOCK_MONOTONIC) through LuaJIT's FFI: the time of each thread's first request and
-- last batch answered, so that a rate is taken over the batches alone.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } navlog_timespec;
int clock_gettime(int clock, navlog_timespec *ts);
void *calloc(size_t n, size_t size);
int getpid(void);
int kill(int pid, int sig);
]]
local ts = ffi.new("navlog_timespec")
local function now()
   ffi.C.clock_gettime(1, ts)
   return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- wrk's main thread sleeps for all of -d whatever the threads do: the last thread to finish sends
-- wrk SIGINT, which ends the run then (wrk's own Ctrl-C). Threads count themselves out in one int
-- shared through its address.
local shared_address, setup_pid = nil, nil

function setup(thread)
   if not shared_address then
      shared_address = tonumber(ffi.cast("intptr_t", ffi.C.calloc(1, 8)))
      setup_pid = ffi.C.getpid()
   end
   -- Globals of the thread's own Lua state (no local of this chunk may have these names).
   thread:set("finished_address", shared_address)
   thread:set("wrk_pid", setup_pid)
   thread:set("id", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   local path, kind, secret = args[1], args[3], args[4]
   nthreads = tonumber(args[2])
   requests, events = {}, {}
   local f = assert(io.open(path, "rb"))
   local i = 0
   while true do
      local header = f:read("*l")
      if not header then break end
      local size, count, session = header:match("^(%d+) (%d+) (.*)$")
      local body = f:read(tonumber(size))
      if i % nthreads == id then
         local headers
         if kind == "journal" then
            headers = { ["Content-Type"] = "application/vnd.fdo.journal" }
         else
            headers = {
               ["Content-Type"] = "application/x-ndjson",
               ["Content-Encoding"] = "gzip",
               ["X-Navlog-Session"] = session,
               ["Authorization"] = "Bearer " .. (secret or ""),
            }
         end
         table.insert(requests, wrk.format("POST", nil, headers, body))
         table.insert(events, tonumber(count))
      end
      i = i + 1
   end
   f:close()
   total_events = 0
   for _, n in ipairs(events) do total_events = total_events + n end
   batches = #requests
   issued, answered, ok, failed = 0, 0, 0, 0
   statuses = ""
   seen = {}
   first_sent, last_answer = 0, 0
   -- Once every batch is out, what a connection asks for while the last answers come: a GET of a
   -- path neither server has (the intake answers 404 (or 401, 405), journal-remote 406), told apart
   -- and not counted (a batch is never answered so).
   filler = wrk.format("GET", "/wrk-filler", {}, nil)
end

function request()
   -- wrk calls the first thread's request() once before the run, to look at a request (its
   -- script_verify_request), and never sends that one: it must not use up a batch.
   if id == 0 and not verified then
      verified = true
      return requests[1] or filler
   end
   if issued == 0 then first_sent = now() end
   issued = issued + 1
   if issued <= #requests then return requests[issued] end
   return filler
end

function response(status, headers, body)
   if issued > #requests and (status == 401 or status == 404 or status == 405 or status == 406) then
      -- A batch whose answer never comes (a server that drops one) must not hold the run: 3 s
      -- after the last answer, the thread stops and says how many are missing.
      if now() - last_answer > 3 then
         finish()
         wrk.thread:stop()
      end
      return
   end
   answered = answered + 1
   last_answer = now()
   if status >= 200 and status < 300 then ok = ok + 1 else failed = failed + 1 end
   seen[status] = (seen[status] or 0) + 1
   if answered >= #requests then
      finish()
      wrk.thread:stop()
   end
end

function finish()
   local finished = ffi.cast("int *", finished_address)
   finished[0] = finished[0] + 1
   if finished[0] == nthreads then ffi.C.kill(wrk_pid, 2) end
   local parts = {}
   for s, n in pairs(seen) do table.insert(parts, s .. ":" .. n) end
   statuses = table.concat(parts, ",")
end

function done(summary, latency, requests_)
   for _, thread in ipairs(threads) do
      io.write(string.format("wrk-thread ok=%d failed=%d missing=%d batches=%d events=%d first=%.6f last=%.6f statuses=%s\n",
         thread:get("ok"), thread:get("failed"), thread:get("batches") - thread:get("answered"), thread:get("batches"),
         thread:get("total_events"), thread:get("first_sent"), thread:get("last_answer"), thread:get("statuses")))
   end
   io.write(string.format("wrk-summary duration_us=%d requests=%d p50_us=%d p99_us=%d max_us=%d connect_errors=%d read_errors=%d write_errors=%d status_errors=%d timeouts=%d\n",
      summary.duration, summary.requests, latency:percentile(50), latency:percentile(99), latency.max,
      summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
