package server

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/ratelimit"
)

// A Setting is one setting of serve, one row of Settings: its flag, its
// environment twin, its default, the check that reads a value into the
// configuration, and its help. The flags, the reading of the environment,
// the refusal of a bad value, petstore help serve and the options table of
// docs/operating.md all come from these rows.
type Setting struct {
	Flag    string // the flag's name, without its dash
	Env     string // the environment variable
	Default string // as -h prints it; "" for none
	// Help is the flag's line in petstore help serve; the variable is
	// added to it.
	Help string
	// Doc is the meaning column of the docs' table, in Markdown; Unset is
	// its default column when Default is "" (what no value means: "off").
	Doc, Unset string
	// Secret keeps the value out of errors: it holds keys, or a URL that
	// may hold a password.
	Secret bool
	// Check reads value into c, or says what is wrong with it (Configure
	// adds where the value came from).
	Check func(c *Config, value string) error
}

// Config is serve's configuration: what Settings read, and what the caller
// sets beside them.
type Config struct {
	Addr           string
	Keys           []apikey.Digest  // -api-keys', as digests
	KeysFile       string           // "": none
	LogFormat      string           // json or text
	RateLimit      *ratelimit.Limit // nil: off
	AuthFailures   *ratelimit.Limit // nil: off
	TrustedProxies []netip.Prefix
	PprofAddr      string // "": no profiling endpoint
	DatabaseURL    string // "": the memory store
	IdempotencyTTL time.Duration
	// ShutdownDelay is how long the server goes on serving, /readyz
	// answering 503, between the first signal and the shutdown.
	ShutdownDelay time.Duration
	// The memory store's bounds, and the bound on open connections.
	MaxPets, MaxIdempotencyKeys, MaxConnections int

	// Sources names where each setting's value came from, by flag name:
	// the flag ("-addr") or its variable ("PETSTORE_ADDR"), so that an
	// error names what the operator wrote.
	Sources map[string]string

	// Set by the caller: the build's version and revision (the listening
	// line, petstore_build_info), and the chaos run's planted defect.
	Version, Revision string
	Plant             Plant
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

// defaultAuthFailures is -auth-failures' default: one wrong key a second
// from a client address, after 30 at once (docs/operating.md says why).
const defaultAuthFailures = "1/s,burst=30"

// Settings are serve's settings, in the order of the docs' table; each
// value is checked in this order.
var Settings = []Setting{
	{Flag: "addr", Env: "PETSTORE_ADDR", Default: ":8080", Help: "listen address", Doc: "listen address",
		Check: func(c *Config, v string) error {
			if err := checkPort(v); err != nil {
				return fmt.Errorf("%v; want host:port, such as :8080 or 127.0.0.1:8080", err)
			}
			c.Addr = v
			return nil
		}},
	{Flag: "api-keys", Env: "PETSTORE_API_KEYS", Secret: true,
		Help: "comma-separated API keys, for development and CI: each " + apikey.Syntax,
		Doc:  "comma-separated keys (development, CI); 32–256 characters of `A-Z a-z 0-9 - . _ ~ + /`, optionally ending in `=` (why 32: [wrong keys](#wrong-keys))",
		Check: func(c *Config, v string) (err error) {
			if v != "" {
				c.Keys, err = apikey.ParseKeys(v)
			}
			return err
		}},
	{Flag: "api-keys-file", Env: "PETSTORE_API_KEYS_FILE",
		Help:  "file of SHA-256 key digests, one a line; re-read on SIGHUP and when it changes",
		Doc:   "file of SHA-256 key digests in hex, one a line, `#` comments (production); re-read on `SIGHUP` and on change ([rotating keys](deploying.md#rotating-keys))",
		Check: func(c *Config, v string) error { c.KeysFile = v; return nil }}, // read by Run: its errors name the file
	{Flag: "log-format", Env: "PETSTORE_LOG_FORMAT", Default: "json",
		Help: "log format: json or text", Doc: "`json` or `text` (`make run` uses `text`)",
		Check: func(c *Config, v string) error {
			if v != "json" && v != "text" {
				return errors.New("want json or text")
			}
			c.LogFormat = v
			return nil
		}},
	{Flag: "rate-limit", Env: "PETSTORE_RATE_LIMIT", Unset: "off",
		Help: "requests per key: N/s or N/m, optionally ,burst=B; off when empty",
		Doc:  "requests per key: `N/s` or `N/m`, optionally `,burst=B` (see below)",
		Check: func(c *Config, v string) (err error) {
			if v != "" {
				c.RateLimit, err = parseLimit(v)
			}
			return err
		}},
	{Flag: "auth-failures", Env: "PETSTORE_AUTH_FAILURES", Default: defaultAuthFailures,
		Help: "wrong keys per client address: N/s or N/m, optionally ,burst=B; off to turn the limit off",
		Doc:  "wrong keys per client address, in the syntax of `-rate-limit`; `off` for no limit (see [wrong keys](#wrong-keys))",
		Check: func(c *Config, v string) (err error) {
			if v == "off" {
				return nil
			}
			if c.AuthFailures, err = parseLimit(v); err != nil {
				return fmt.Errorf("%w, or off", err)
			}
			return nil
		}},
	{Flag: "trusted-proxies", Env: "PETSTORE_TRUSTED_PROXIES",
		Help:  "comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client for -auth-failures",
		Doc:   "comma-separated addresses or CIDR prefixes of the proxies whose `X-Forwarded-For` names the client for `-auth-failures`; none: the peer's address",
		Check: func(c *Config, v string) (err error) { c.TrustedProxies, err = parsePrefixes(v); return err }},
	{Flag: "pprof", Env: "PETSTORE_PPROF_ADDR", Unset: "off",
		Help: "serve net/http/pprof on this loopback address; off when empty",
		Doc:  "serve `net/http/pprof` (`/debug/pprof/`) on this address; refused unless its host is loopback (see [BENCHMARKS.md](../BENCHMARKS.md))",
		Check: func(c *Config, v string) error {
			if v != "" && (!loopback(v) || checkPort(v) != nil) {
				return errors.New("want a loopback host and a port, such as 127.0.0.1:6060")
			}
			c.PprofAddr = v
			return nil
		}},
	{Flag: "database-url", Env: "PETSTORE_DATABASE_URL", Secret: true,
		Help: "PostgreSQL URL; the store is in memory when empty",
		Doc:  "PostgreSQL URL; in memory when empty (see [Running with PostgreSQL](#running-with-postgresql))",
		Check: func(c *Config, v string) error {
			if v != "" {
				if _, err := pgxpool.ParseConfig(v); err != nil {
					return fmt.Errorf("%s; want a PostgreSQL URL, such as postgres://user:password@host:5432/petstore", pgxReason(err))
				}
			}
			c.DatabaseURL = v
			return nil
		}},
	{Flag: "idempotency-ttl", Env: "PETSTORE_IDEMPOTENCY_TTL", Default: shortDuration(httpapi.DefaultIdempotencyTTL),
		Help: "how long the outcome of a create with an Idempotency-Key is kept, 1s to 720h",
		Doc:  "how long the outcome of a create sent with an `Idempotency-Key` is kept, `1s` to `720h` (see [Retrying creates safely](contract.md#retrying-creates-safely))",
		Check: func(c *Config, v string) (err error) {
			c.IdempotencyTTL, err = durationIn(v, minIdempotencyTTL, maxIdempotencyTTL, "want a duration from 1s to 720h, such as 24h")
			return err
		}},
	{Flag: "shutdown-delay", Env: "PETSTORE_SHUTDOWN_DELAY", Default: shortDuration(defaultShutdownDelay),
		Help: "how long to go on serving after SIGTERM or SIGINT, /readyz answering 503, before shutting down; 0 for none",
		Doc:  "on SIGTERM or SIGINT, how long to go on serving, `/readyz` answering 503, before shutting down; `0` for none; a second signal skips it (see [deploying.md](deploying.md#draining-on-shutdown))",
		Check: func(c *Config, v string) (err error) {
			c.ShutdownDelay, err = durationIn(v, 0, time.Hour, "want a duration from 0s (none) to 1h, such as 5s")
			return err
		}},
	{Flag: "max-pets", Env: "PETSTORE_MAX_PETS", Default: strconv.Itoa(memstore.DefaultMaxPets),
		Help:  "pets the memory store holds at most; a create beyond is answered 507",
		Doc:   "pets the memory store holds at most; a create beyond is answered `507` `store_full` (see [Bounds](#bounds))",
		Check: func(c *Config, v string) (err error) { c.MaxPets, err = bound(v); return err }},
	{Flag: "max-idempotency-keys", Env: "PETSTORE_MAX_IDEMPOTENCY_KEYS", Default: strconv.Itoa(memstore.DefaultMaxKeys),
		Help:  "outcomes of creates with an Idempotency-Key the memory store keeps at most; a create with a new key beyond is answered 507",
		Doc:   "outcomes of creates with an `Idempotency-Key` the memory store keeps at most; a create with a new key beyond is answered `507` `idempotency_keys_full` (see [Bounds](#bounds))",
		Check: func(c *Config, v string) (err error) { c.MaxIdempotencyKeys, err = bound(v); return err }},
	{Flag: "max-connections", Env: "PETSTORE_MAX_CONNECTIONS", Default: "auto",
		Help: "client connections open at most; at the bound a new one closes the least recently used one waiting for its client; auto: " + autoConnectionsHelp,
		Doc:  "client connections open at once: `auto` is the file descriptor limit (`ulimit -n`) less an eighth (at least 64), at most 1024; a number may not exceed that room (see [Bounds](#bounds))",
		Check: func(c *Config, v string) (err error) {
			c.MaxConnections, err = connectionLimit(v, descriptorLimit())
			return err
		}},
}

// Flags returns serve's flags, defined from Settings on a new FlagSet with
// their built-in defaults: Configure applies the environment after parsing,
// so that -h never prints a value taken from it (such as a key).
func Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("petstore serve", flag.ContinueOnError)
	for _, s := range Settings {
		fs.String(s.Flag, s.Default, s.Help+" ("+s.Env+")")
	}
	return fs
}

// Configure reads the configuration through Settings: each value is the
// flag's when it was given on fs (parsed), else its variable's when getenv
// has one, else the default. The first value refused is the error: one
// line, naming the flag or variable it came from and, unless the setting
// is secret, quoting it.
func Configure(fs *flag.FlagSet, getenv func(string) string) (Config, error) {
	cfg := Config{Sources: map[string]string{}}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range Settings {
		value, source := fs.Lookup(s.Flag).Value.String(), "-"+s.Flag
		if e := getenv(s.Env); e != "" && !given[s.Flag] {
			value, source = e, s.Env
		}
		cfg.Sources[s.Flag] = source
		if err := s.Check(&cfg, value); err != nil {
			if s.Secret {
				return cfg, fmt.Errorf("%s: %w", source, err)
			}
			return cfg, fmt.Errorf("%s %.64q: %w", source, value, err)
		}
	}
	return cfg, nil
}

// DocsTable is the options table of docs/operating.md, in Markdown: a row
// a setting, written from Settings (TestSettingsTableInDocs compares them).
func DocsTable() string {
	var b strings.Builder
	b.WriteString("| flag | variable | default | meaning |\n|---|---|---|---|\n")
	for _, s := range Settings {
		def := " " + s.Unset + " "
		switch {
		case s.Default != "":
			def = " `" + s.Default + "` "
		case s.Unset == "":
			def = " "
		}
		fmt.Fprintf(&b, "| `-%s` | `%s` |%s| %s |\n", s.Flag, s.Env, def, s.Doc)
	}
	return b.String()
}

// shortDuration writes d as the docs do: 24h, not 24h0m0s.
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

// durationIn reads s as a duration from lo to hi; want is the error.
func durationIn(s string, lo, hi time.Duration, want string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < lo || d > hi {
		return 0, errors.New(want)
	}
	return d, nil
}

// parseLimit reads a rate (ratelimit.Parse).
func parseLimit(s string) (*ratelimit.Limit, error) {
	l, err := ratelimit.Parse(s)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// bound reads a bound of the memory store.
func bound(s string) (int, error) {
	n, ok := positiveInt(s)
	if !ok {
		return 0, errors.New("want a positive integer, such as 1000000")
	}
	return n, nil
}

// positiveInt reads s as a positive decimal integer, written without a sign.
func positiveInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return 0, false
	}
	return n, true
}

// parsePrefixes reads -trusted-proxies: comma-separated addresses (each a
// prefix of its own) and CIDR prefixes.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("%q: want an IP address or a CIDR prefix, such as 10.0.0.0/8", p)
			}
			prefix = netip.PrefixFrom(a, a.BitLen())
		}
		prefixes = append(prefixes, prefix)
	}
	return prefixes, nil
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

// checkPort checks addr's port (a number up to 65535, or a service name),
// so that a bad -addr is refused before serve does anything; the host is
// left to net.Listen.
func checkPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	_, err = net.LookupPort("tcp", port)
	return err
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
