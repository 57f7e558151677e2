# Reads `go tool pprof -traces` output (a CPU profile, or allocations with
# -sample_index) and prints, for each layer of the serving path, its share
# of the samples and that share over REQUESTS: ns (or allocations, or bytes)
# a request. A sample goes to the innermost frame of its stack that belongs
# to a layer (each layer's frames below: first match from the leaf up), so
# a layer's row is its own work, not the layers it calls; what no layer
# claims (the garbage collector's workers, the scheduler) is "runtime".
# UNIT is ns, allocs or bytes.
function layer(f) {
	if (f ~ /^net\.\(\*conn\)\.Write$/) return "the write (system call)"
	if (f ~ /^net\.\(\*conn\)\.Read$/) return "the read (system call)"
	if (f ~ /logbuf\.|internal\/server\.\(\*logOut\)|accessLog\.|accessEntry\)\.|slog\./) return "access log"
	if (f ~ /\(\*series\)\.|prometheus|storemetrics/) return "metrics"
	if (f ~ /internal\/connlimit\.|\(\*wireConn\)|cannedAnswer|closeWhenDraining/) return "connection wrapper (bound, wire, drain)"
	if (f ~ /requestID|RequestIDWithConfig|google\/uuid/) return "request id"
	if (f ~ /RecoverWithConfig/) return "recover"
	if (f ~ /securityHeaders|SecureWithConfig/) return "security headers"
	if (f ~ /httpapi\.cors|CORSWithConfig/) return "CORS"
	if (f ~ /methodNotAllowed/) return "method check"
	if (f ~ /inContract/) return "contract path check"
	if (f ~ /rateLimit|RateLimiterWithConfig/) return "rate limit"
	if (f ~ /authenticate|internal\/apikey|throttle|internal\/ratelimit|bearerToken|crypto\/sha256/) return "auth (and the wrong-key throttle)"
	if (f ~ /kin-openapi|echo-middleware|gorilla\/mux|httpapi\.validate|httpapi\..*validate\.func|leftToValidate|outOfBounds|noneSent/) return "kin-openapi validation"
	if (f ~ /strictParams|acceptJSON|noBody|jsonBody|internal\/strict\./) return "strict parsing"
	if (f ~ /decodeBody|readBody|internal\/newpet|internal\/canon\.Canonical/) return "body read and mapping"
	if (f ~ /petJSON|appendPet|appendString|encoding\/json|go-json-experiment|\(\*context\)\.JSON|DefaultJSONSerializer/) return "encoding"
	if (f ~ /\(\*handler\)\.|\(\*bareHandler\)|ServerInterfaceWrapper|internal\/memstore|internal\/pets\.|petstore-expanded\/echo\/api|oapi-codegen\/runtime/) return "handler (binding, store)"
	if (f ~ /\(\*response\)\.finishRequest|\(\*chunkWriter\)|Header\)\.write|\(\*response\)\.WriteHeader|bufio\.\(\*Writer\)/) return "net/http: answer's head and buffer"
	if (f ~ /readRequest|textproto|\(\*connReader\)|bufio\.\(\*Reader\)|\(\*body\)\.Read|\(\*expectContinueReader\)/) return "net/http: read and parse the request"
	if (f ~ /httpapi\.dispatch|observe|errorHandler|callOf/) return "observe (call, clock, in flight)"
	if (f ~ /labstack\/echo/) return "Echo (router, context)"
	if (f ~ /^net\/http\./) return "net/http: other"
	return ""
}
/^-+\+-+$/ { flush(); next }
/^ +-?[0-9.]+[a-zA-Zµ]* +[^ ]/ && !inStack {
	v = $1; sub(/^ +/, "", v)
	val = tonum(v); inStack = 1; got = ""
	f = $0; sub(/^ +[^ ]+ +/, "", f); sub(/ \(inline\)$/, "", f)
	got = layer(f)
	next
}
inStack && /^ +[^ ]/ {
	if (got == "") { f = $0; sub(/^ +/, "", f); sub(/ \(inline\)$/, "", f); got = layer(f) }
	next
}
function flush() {
	if (inStack) { if (got == "") got = "runtime (GC, scheduler), other"; sum[got] += val; total += val }
	inStack = 0
}
# tonum turns 10ms, 1.50s, 512, 2.5kB, 1MB into ns (CPU) or a count.
function tonum(s,    n, u) {
	n = s + 0; u = s; sub(/^[0-9.]+/, "", u)
	if (u == "ns") return n
	if (u == "us" || u == "µs") return n * 1e3
	if (u == "ms") return n * 1e6
	if (u == "s") return n * 1e9
	if (u == "kB" || u == "KB") return n * 1024
	if (u == "MB") return n * 1048576
	if (u == "GB") return n * 1073741824
	return n
}
END {
	flush()
	# unsorted: the caller sorts (sort -t'|' -k2 -rn), all last
	for (k in sum) printf "%-42s|%6.1f%%|%10.1f %s/req\n", k, 100 * sum[k] / total, sum[k] / REQUESTS, UNIT
	printf "%-42s|%6.1f%%|%10.1f %s/req\n", "zz all", 100, total / REQUESTS, UNIT
}
