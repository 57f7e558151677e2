-- wrk script of .ci/guess: every request (GET of the URL's path, the
-- listing under the spec's base path) presents a new wrong key; counts
-- the answers by status and prints one machine-readable line at the end:
-- how many keys were checked (401) and refused unchecked (429), and the
-- checked ones a second.
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) n401, n429, nother, i = 0, 0, 0, 0 end
function request()
	i = i + 1
	return wrk.format("GET", wrk.path, {["Authorization"] = string.format("Bearer guess-%08d-%024d", math.random(0, 99999999), i)})
end
function response(status, headers, body)
	if status == 401 then n401 = n401 + 1 elseif status == 429 then n429 = n429 + 1 else nother = nother + 1 end
end
function done(summary, latency, requests)
	local checked, refused, other = 0, 0, 0
	for _, t in ipairs(threads) do
		checked = checked + t:get("n401"); refused = refused + t:get("n429"); other = other + t:get("nother")
	end
	local s = summary.duration / 1e6
	io.write(string.format("RESULT seconds=%.1f checked=%d refused=%d other=%d checked_per_second=%.1f\n", s, checked, refused, other, checked / s))
end
