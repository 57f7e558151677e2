-- wrk script of .ci/load: the request from the environment (LOAD_METHOD,
-- LOAD_BODY, LOAD_KEY), and one machine-readable line at the end:
-- requests, seconds, errors (transport and non-2xx/3xx), p50 and p99 in ms.
wrk.method = os.getenv("LOAD_METHOD") or "GET"
local body = os.getenv("LOAD_BODY") or ""
if body ~= "" then
	wrk.body = body
	wrk.headers["Content-Type"] = "application/json"
end
local key = os.getenv("LOAD_KEY") or ""
if key ~= "" then
	wrk.headers["Authorization"] = "Bearer " .. key
end

function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT requests=%d seconds=%.3f errors=%d p50=%.3f p99=%.3f\n",
		summary.requests, summary.duration / 1e6,
		e.connect + e.read + e.write + e.status + e.timeout,
		latency:percentile(50) / 1e3, latency:percentile(99) / 1e3))
end
