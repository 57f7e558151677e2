package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/connlimit"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/ratelimit"
	"github.com/petstore/petstore/internal/telemetry"
)

// Timeouts of the HTTP server and of shutdown.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownTimeout   = 10 * time.Second
	maxHeaderBytes    = 64 << 10
)

// run is the whole program: main only gives it the process's context,
// arguments, environment and output streams. ctx ends at the first SIGTERM
// or SIGINT; withSkipDelay tells serve of the second.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	name, rest := "serve", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	} else if len(rest) == 1 && isHelpFlag(rest[0]) {
		name, rest = "help", nil // petstore -h: the commands, not serve's flags
	}
	cmd := findCommand(name)
	if cmd == nil {
		return usageErrorf("unknown command %q (want %s; see petstore help)", name, commandNames())
	}
	if wantsVersion(rest) {
		return printVersion(stdout)
	}
	return cmd.run(ctx, rest, getenv, stdout, stderr)
}

// command is one of petstore's commands, as help lists it.
type command struct {
	name    string
	summary string // one line, for petstore help
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands lists petstore's commands in help's order. It is filled in init:
// help's run reads it.
var commands []command

func init() {
	commands = []command{
		{"serve", "serve the API (the default command)", serve},
		{"keygen", "print a new API key and the digest line for the keys file", keygen},
		{"conform", "check an implementation of the API against the contract", conformCmd},
		{"version", "print the version, the VCS revision and whether the tree was modified", versionCmd},
		{"help", "list the commands, or show a command's description, flags and example", help},
	}
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

const helpUsage = `usage: petstore help [COMMAND]

Lists petstore's commands with one line each; with COMMAND, shows that
command's description, flags and an example (as petstore COMMAND -h does).

Example:
  petstore help serve
`

const helpTail = `
With no COMMAND, petstore serves. Run petstore help COMMAND (or petstore
COMMAND -h) for a command's description, flags and an example. Every command
takes -version: it prints what petstore version prints, and does nothing else.

Exit status: 0 done; 1 failed (serve could not start or stopped on an
error, conform's checks failed); 2 a usage error, alike for every command:
an unknown command, flag or argument, or a value a flag does not take
(conform exits 2 too when it cannot judge the target); 3 conform's run
incomplete: no check failed, but it could not judge all it should.
`

// help prints the list of commands, or one command's usage, on stdout.
func help(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 1 && isHelpFlag(args[0]):
		fmt.Fprint(stdout, helpUsage)
		return nil
	case len(args) > 1:
		return usageErrorf("help: unexpected argument %q (see petstore help -h)", args[1])
	case len(args) == 1:
		cmd := findCommand(args[0])
		if cmd == nil {
			return usageErrorf("help: unknown command %q (want %s)", args[0], commandNames())
		}
		return cmd.run(ctx, []string{"-h"}, getenv, stdout, stderr)
	}
	fmt.Fprintf(stdout, "petstore %s: the Pet Store API's reference server.\n\nusage: petstore [COMMAND] [flags]\n\nCommands:\n", buildVersion())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(stdout, helpTail)
	return nil
}

// parseFlags parses a command's flags. -h prints usage and the flags on
// stdout and returns flag.ErrHelp; any other error is one line naming the
// command and where its help is.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, usage, stdout)
			return err
		}
		return usageErrorf("%s: %v (see %s -h)", strings.TrimPrefix(fs.Name(), "petstore "), err, fs.Name())
	}
	return nil
}

// noArgs refuses arguments left after the flags, alike for every command
// that takes none.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageErrorf("%s: unexpected argument %q (see %s -h)", strings.TrimPrefix(fs.Name(), "petstore "), fs.Arg(0), fs.Name())
	}
	return nil
}

// parseNoArgs parses the flags of a command that takes neither flags nor
// arguments; done is set when -h printed its usage.
func parseNoArgs(name, usage string, args []string, stdout io.Writer) (done bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if err := parseFlags(fs, usage, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	return false, noArgs(fs)
}

func printUsage(fs *flag.FlagSet, usage string, w io.Writer) {
	fmt.Fprint(w, usage)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// config is the configuration of serve; each flag has an environment twin.
type config struct {
	addr        string
	apiKeys     string
	keys        []apikey.Digest // the digests of apiKeys
	apiKeysFile string
	logFormat   string
	rateLimit   *ratelimit.Limit // nil: no rate limiting
	databaseURL string
	pprofAddr   string // "": no profiling endpoint
	// authFailures limits wrong keys per client address (nil: off), each
	// client named by its peer address or by a trusted proxy.
	authFailures   *ratelimit.Limit
	trustedProxies []netip.Prefix
	// idempotencyTTL is how long the outcome of a create with an
	// Idempotency-Key is kept.
	idempotencyTTL time.Duration
	// shutdownDelay is how long the server goes on serving, /readyz
	// answering 503, between the first signal and the shutdown.
	shutdownDelay time.Duration
	// The memory store's bounds, and the bound on open connections.
	maxPets, maxIdempotencyKeys, maxConnections int
	// source names where each flag's value came from, by flag name: the
	// flag ("-addr") or its environment variable ("PETSTORE_ADDR"), so that
	// an error names what the operator actually wrote.
	source map[string]string
}

// The range of -idempotency-ttl: a retry comes seconds to hours later, and
// every key in the window is kept.
const (
	minIdempotencyTTL = time.Second
	maxIdempotencyTTL = 30 * 24 * time.Hour
)

// defaultShutdownDelay is -shutdown-delay's default: the few seconds a load
// balancer takes to stop sending new connections to a replica going away.
const defaultShutdownDelay = 5 * time.Second

// envOf gives each serve flag's environment twin.
var envOf = map[string]string{
	"addr":                 "PETSTORE_ADDR",
	"api-keys":             "PETSTORE_API_KEYS",
	"api-keys-file":        "PETSTORE_API_KEYS_FILE",
	"log-format":           "PETSTORE_LOG_FORMAT",
	"rate-limit":           "PETSTORE_RATE_LIMIT",
	"database-url":         "PETSTORE_DATABASE_URL",
	"idempotency-ttl":      "PETSTORE_IDEMPOTENCY_TTL",
	"pprof":                "PETSTORE_PPROF_ADDR",
	"shutdown-delay":       "PETSTORE_SHUTDOWN_DELAY",
	"max-pets":             "PETSTORE_MAX_PETS",
	"max-idempotency-keys": "PETSTORE_MAX_IDEMPOTENCY_KEYS",
	"max-connections":      "PETSTORE_MAX_CONNECTIONS",
	"auth-failures":        "PETSTORE_AUTH_FAILURES",
	"trusted-proxies":      "PETSTORE_TRUSTED_PROXIES",
}

const serveUsage = `usage: petstore [serve] [flags]

Serves the Pet Store API: the contract's operations under /v1, and /healthz,
/readyz, /metrics, /openapi.yaml and /docs beside them. Each flag has an
environment twin, named in its description; a flag wins over its variable.
With no keys configured, one key is generated and printed on stderr.

The keys file is re-read on SIGHUP and whenever it changes on disk (a
symlink swap included); a file that does not parse keeps the keys in force.
Keys from -api-keys stay as started.

On SIGTERM or SIGINT, /readyz answers 503 at once while the server goes on
serving for -shutdown-delay; then it stops accepting and lets the requests in
flight finish. A second signal skips the delay.

Example:
  PETSTORE_API_KEYS=dev-key-0123456789abcdef0123456789 petstore serve -addr 127.0.0.1:8080 -log-format text
`

// shortDuration writes d as the README does: 24h, not 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// serveFlags defines serve's flags on a new FlagSet, with their built-in
// defaults: the environment is applied after parsing, so that -h never
// prints a value taken from it (such as a key).
func serveFlags() (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("petstore serve", flag.ContinueOnError)
	v := map[string]*string{}
	def := func(name, value, usage string) {
		v[name] = fs.String(name, value, usage+" ("+envOf[name]+")")
	}
	def("addr", ":8080", "listen address")
	def("api-keys", "", "comma-separated API keys, for development and CI: each "+apikey.Syntax)
	def("api-keys-file", "", "file of SHA-256 key digests, one a line; re-read on SIGHUP and when it changes")
	def("log-format", "json", "log format: json or text")
	def("rate-limit", "", "requests per key: N/s or N/m, optionally ,burst=B; off when empty")
	def("auth-failures", defaultAuthFailures, "wrong keys per client address: N/s or N/m, optionally ,burst=B; off to turn the limit off")
	def("trusted-proxies", "", "comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client for -auth-failures")
	def("database-url", "", "PostgreSQL URL; the store is in memory when empty")
	def("idempotency-ttl", shortDuration(httpapi.DefaultIdempotencyTTL), "how long the outcome of a create with an Idempotency-Key is kept, 1s to 720h")
	def("pprof", "", "serve net/http/pprof on this loopback address; off when empty")
	def("shutdown-delay", shortDuration(defaultShutdownDelay), "how long to go on serving after SIGTERM or SIGINT, /readyz answering 503, before shutting down; 0 for none")
	def("max-pets", strconv.Itoa(memstore.DefaultMaxPets), "pets the memory store holds at most; a create beyond is answered 507")
	def("max-idempotency-keys", strconv.Itoa(memstore.DefaultMaxKeys), "outcomes of creates with an Idempotency-Key the memory store keeps at most; a create with a new key beyond is answered 507")
	def("max-connections", "auto", "client connections open at most; at the bound a new one closes the least recently used one waiting for its client; auto: "+autoConnectionsHelp)
	return fs, v
}

func parseConfig(args []string, getenv func(string) string, stdout io.Writer) (config, error) {
	cfg := config{source: map[string]string{}}
	fs, v := serveFlags()
	if err := parseFlags(fs, serveUsage, args, stdout); err != nil {
		return cfg, err
	}
	if err := noArgs(fs); err != nil {
		return cfg, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, env := range envOf {
		cfg.source[name] = "-" + name
		if e := getenv(env); e != "" && !set[name] {
			*v[name] = e
			cfg.source[name] = env
		}
	}
	// bad words an error about a value: where it came from, and the value.
	bad := func(name, format string, a ...any) error {
		return usageErrorf("%s %.64q: %s", cfg.source[name], *v[name], fmt.Sprintf(format, a...))
	}
	cfg.addr, cfg.apiKeys, cfg.apiKeysFile = *v["addr"], *v["api-keys"], *v["api-keys-file"]
	cfg.logFormat, cfg.databaseURL, cfg.pprofAddr = *v["log-format"], *v["database-url"], *v["pprof"]
	if err := checkPort(cfg.addr); err != nil {
		return cfg, bad("addr", "%v; want host:port, such as :8080 or 127.0.0.1:8080", err)
	}
	if cfg.databaseURL != "" {
		if _, err := pgxpool.ParseConfig(cfg.databaseURL); err != nil { // no value: it may hold a password
			return cfg, usageErrorf("%s: %s; want a PostgreSQL URL, such as postgres://user:password@host:5432/petstore", cfg.source["database-url"], pgxReason(err))
		}
	}
	if cfg.apiKeys != "" {
		ds, err := apikey.ParseKeys(cfg.apiKeys)
		if err != nil {
			return cfg, usageErrorf("%s: %w", cfg.source["api-keys"], err) // no value: it holds keys
		}
		cfg.keys = ds
	}
	d, err := time.ParseDuration(*v["idempotency-ttl"])
	if err != nil || d < minIdempotencyTTL || d > maxIdempotencyTTL {
		return cfg, bad("idempotency-ttl", "want a duration from 1s to 720h, such as 24h")
	}
	cfg.idempotencyTTL = d
	d, err = time.ParseDuration(*v["shutdown-delay"])
	if err != nil || d < 0 || d > time.Hour {
		return cfg, bad("shutdown-delay", "want a duration from 0s (none) to 1h, such as 5s")
	}
	cfg.shutdownDelay = d
	if cfg.pprofAddr != "" && (!loopback(cfg.pprofAddr) || checkPort(cfg.pprofAddr) != nil) {
		return cfg, bad("pprof", "want a loopback host and a port, such as 127.0.0.1:6060")
	}
	if r := *v["rate-limit"]; r != "" {
		l, err := ratelimit.Parse(r)
		if err != nil {
			return cfg, bad("rate-limit", "%v", err)
		}
		cfg.rateLimit = &l
	}
	if cfg.logFormat != "json" && cfg.logFormat != "text" {
		return cfg, bad("log-format", "want json or text")
	}
	for name, n := range map[string]*int{"max-pets": &cfg.maxPets, "max-idempotency-keys": &cfg.maxIdempotencyKeys} {
		var ok bool
		if *n, ok = positiveInt(*v[name]); !ok {
			return cfg, bad(name, "want a positive integer, such as 1000000")
		}
	}
	if cfg.maxConnections, err = connectionLimit(*v["max-connections"], descriptorLimit()); err != nil {
		return cfg, bad("max-connections", "%v", err)
	}
	if err := parseThrottle(&cfg, *v["auth-failures"], *v["trusted-proxies"]); err != nil {
		return cfg, bad(err.flag, "%v", err.err)
	}
	return cfg, nil
}

// pgxReason is why pgx refused a connection string, without the string:
// pgx's message names it with the password masked only as far as it could
// parse it.
func pgxReason(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "cannot parse"
	}
	bare := *pe
	bare.ConnString = ""
	return "cannot parse: " + strings.TrimPrefix(bare.Error(), "cannot parse ``: ")
}

// positiveInt reads s as a positive decimal integer, written without a sign.
func positiveInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return 0, false
	}
	return n, true
}

// checkPort checks addr's port (a number up to 65535, or a service name),
// so that a bad -addr is refused before serve does anything; the host is
// left to net.Listen.
func checkPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return err
	}
	return nil
}

// defaultAuthFailures is -auth-failures' default: one wrong key a second
// from a client address, after 30 at once (docs/operating.md says why).
const defaultAuthFailures = "1/s,burst=30"

// flagError is an error about one flag's value.
type flagError struct {
	flag string
	err  error
}

// parseThrottle reads -auth-failures and -trusted-proxies into cfg.
func parseThrottle(cfg *config, failures, proxies string) *flagError {
	if failures != "off" {
		l, err := ratelimit.Parse(failures)
		if err != nil {
			return &flagError{"auth-failures", fmt.Errorf("%w, or off", err)}
		}
		cfg.authFailures = &l
	}
	for _, p := range strings.Split(proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return &flagError{"trusted-proxies", fmt.Errorf("%q: want an IP address or a CIDR prefix, such as 10.0.0.0/8", p)}
			}
			prefix = netip.PrefixFrom(a, a.BitLen())
		}
		cfg.trustedProxies = append(cfg.trustedProxies, prefix)
	}
	return nil
}

// loopback reports whether addr is host:port with a loopback host: the
// profiles show the process's memory and code, for the operator only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// servePprof serves net/http/pprof's handlers on addr until ctx is done.
func servePprof(ctx context.Context, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	log.Info("pprof listening", "addr", ln.Addr().String())
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close() // a profile in progress is cut short
	}()
	return nil
}

// serveKeys is the key set serve checks requests with.
type serveKeys struct {
	source   apikey.Source
	reloader *apikey.Reloader // nil without a keys file
	// generated is the key made when none is configured: printed once the
	// server listens, so that a run that fails to start prints none.
	generated string
}

// loadKeys builds the key set from the configuration: the keys of
// PETSTORE_API_KEYS, fixed for the life of the process, and the digests of
// PETSTORE_API_KEYS_FILE, which the reloader re-reads on SIGHUP and on
// change. With no keys configured it generates one.
func loadKeys(cfg config, log *slog.Logger) (serveKeys, error) {
	if cfg.apiKeysFile != "" {
		r, err := apikey.NewReloader(cfg.apiKeysFile, cfg.keys, log)
		var pe *fs.PathError
		if errors.As(err, &pe) { // the error names the file
			return serveKeys{}, fmt.Errorf("%s: %w", cfg.source["api-keys-file"], err)
		}
		if err != nil {
			return serveKeys{}, fmt.Errorf("%s %s: %w", cfg.source["api-keys-file"], cfg.apiKeysFile, err)
		}
		return serveKeys{source: r, reloader: r}, nil
	}
	if len(cfg.keys) > 0 {
		return serveKeys{source: apikey.NewSet(cfg.keys...)}, nil
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return serveKeys{}, err
	}
	return serveKeys{source: apikey.NewSet(digest), generated: key}, nil
}

// reloadKeys runs r until serve returns, the drain included: on SIGHUP and
// when its file changes. It returns the function that stops it.
func reloadKeys(r *apikey.Reloader) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, hup)
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// serve runs the server until ctx ends, then drains it: each step below
// is a function of its own.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	out := newLogOut(stdout, stderr)
	log := newLogger(cfg.logFormat, out)
	keys, err := loadKeys(cfg, log)
	if err != nil {
		return err
	}
	if keys.reloader != nil {
		defer reloadKeys(keys.reloader)()
	}
	// Tracing (issue 34): off unless the OTEL_* environment configures it;
	// flushed once the server has drained (deferred before the store's close,
	// so it runs after it).
	tracing, err := telemetry.Setup(ctx)
	if err != nil {
		return err
	}
	defer flushTracing(tracing, log)
	store, storeName, closeStore, err := openStore(ctx, getenv, cfg.databaseURL, cfg.source["database-url"], memBounds(cfg), storeOptions(tracing)...)
	if err != nil {
		return err
	}
	defer closeStore()
	conns := connlimit.New(cfg.maxConnections)
	app, err := newApp(ctx, cfg, keys, store, tracing, log, out, conns.Collectors())
	if err != nil {
		return err
	}
	if cfg.pprofAddr != "" {
		pctx, stopPprof := context.WithCancel(ctx)
		defer stopPprof()
		if err := servePprof(pctx, cfg.pprofAddr, log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", cfg.source["addr"], cfg.addr, err)
	}
	srv := newHTTPServer(closeWhenDraining(ctx.Done(), tracing.Handler(app)), log) // tracing.Handler is app itself when tracing is off
	if keys.generated != "" {
		fmt.Fprintf(stderr, "petstore: no API keys configured; this run accepts the generated key\n  %s\n", keys.generated)
	}
	// net/http's own answers in the contract's words (httpapi.Listener),
	// and the connection cap (after srv is set up, before it serves).
	ln = conns.Wrap(srv, httpapi.Listener(ln, log, maxHeaderBytes))
	logListening(log, ln, cfg, storeName, keys, tracing)
	return serveUntilDrained(ctx, srv, ln, cfg.shutdownDelay, log)
}

// flushTracing sends the spans still buffered, within shutdownTimeout.
func flushTracing(tracing *telemetry.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := tracing.Shutdown(ctx); err != nil {
		log.Warn("tracing: flush on shutdown", "error", err.Error())
	}
}

// storeOptions are the PostgreSQL store's options: its queries traced when
// tracing is on.
func storeOptions(tracing *telemetry.Tracing) []pgstore.Option {
	if t := tracing.PgxTracer(); t != nil {
		return []pgstore.Option{pgstore.WithTracer(t)}
	}
	return nil
}

// newApp builds the API's handler from the configuration. From the first
// signal on, /readyz answers 503: ctx.Done() is closed before cancel
// returns, so no probe after the signal sees 200.
func newApp(ctx context.Context, cfg config, keys serveKeys, store pets.Store, tracing *telemetry.Tracing, log *slog.Logger, out *logOut, collectors []prometheus.Collector) (http.Handler, error) {
	hcfg := httpapi.Config{Store: store, Keys: keys.source, Logger: log, IdempotencyTTL: cfg.idempotencyTTL, Draining: ctx.Done(), Collectors: collectors}
	build := readBuildFacts()
	hcfg.Version, hcfg.Revision = build.version, build.revision // petstore_build_info says what petstore version says
	if keys.reloader != nil {
		hcfg.Collectors = append(hcfg.Collectors, keys.reloader.Collectors()...)
	}
	if err := tracing.Apply(&hcfg); err != nil { // tracing hooks: nothing when off
		return nil, err
	}
	if cfg.logFormat == "json" {
		hcfg.AccessLog = out // the same lines, appended without slog's machinery
	}
	if cfg.rateLimit != nil {
		hcfg.RateLimit = ratelimit.New(*cfg.rateLimit, time.Now)
	}
	hcfg.AuthFailures, hcfg.TrustedProxies = cfg.authFailures, cfg.trustedProxies
	return httpapi.New(hcfg)
}

// newHTTPServer is the HTTP server of the API, with its timeouts and limits.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		// net/http reads 4096 bytes past MaxHeaderBytes (its bufio slop)
		// before it answers 431: the contract's bound is the head's own.
		MaxHeaderBytes: maxHeaderBytes - 4096,
		// "OPTIONS *" goes to the app (404 Error), not net/http's 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// logListening logs the start-up line: where the server listens and what it
// serves with.
func logListening(log *slog.Logger, ln net.Listener, cfg config, storeName string, keys serveKeys, tracing *telemetry.Tracing) {
	limit := "off"
	if cfg.rateLimit != nil {
		limit = cfg.rateLimit.String()
	}
	if tracing.On() {
		log.Info("tracing on", "exporter", tracing.Exporter())
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName, "keys", keys.source.Current().Len(), "rate_limit", limit, "idempotency_ttl", shortDuration(cfg.idempotencyTTL), "shutdown_delay", shortDuration(cfg.shutdownDelay), "max_connections", cfg.maxConnections, "version", buildVersion())
}

// serveUntilDrained serves on ln until ctx ends; then, after shutdownDelay
// (cut short by a second signal), it stops accepting and lets the requests
// in flight finish.
func serveUntilDrained(ctx context.Context, srv *http.Server, ln net.Listener, shutdownDelay time.Duration, log *slog.Logger) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if shutdownDelay > 0 {
		// Serve on while the load balancer sees /readyz fail and stops
		// sending new connections here.
		log.Info("draining", "shutdown_delay", shortDuration(shutdownDelay))
		delay := time.NewTimer(shutdownDelay)
		select {
		case <-delay.C:
		case <-skipDelay(ctx):
			delay.Stop()
			log.Info("second signal: shutting down without waiting out the delay")
		case err := <-served:
			delay.Stop()
			return fmt.Errorf("serve: %w", err)
		}
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	<-served
	log.Info("stopped")
	return nil
}

const keygenUsage = `usage: petstore keygen

Prints a new random API key and its digest line. Give the key to the client:
it is shown only this once. Append the digest line to the file that
PETSTORE_API_KEYS_FILE (-api-keys-file) names: the server keeps only digests.

Example:
  petstore keygen
  # API key: give it to the client; it is shown only this once.
  psk_2bV0…
  # Digest line: append it to the PETSTORE_API_KEYS_FILE.
  5c1f9e…
`

func keygen(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if done, err := parseNoArgs("petstore keygen", keygenUsage, args, stdout); done || err != nil {
		return err
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "# API key: give it to the client; it is shown only this once.\n%s\n# Digest line: append it to the PETSTORE_API_KEYS_FILE.\n%s\n", key, digest)
	return err
}

// closeWhenDraining answers with Connection: close once draining is
// closed, so that keep-alive clients reconnect, through the load balancer,
// to a replica that stays.
func closeWhenDraining(draining <-chan struct{}, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-draining:
			w.Header().Set("Connection", "close")
		default:
		}
		h.ServeHTTP(w, r)
	})
}
