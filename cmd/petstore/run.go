package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/ratelimit"
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
// arguments, environment and output streams.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, rest := "serve", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "keygen":
		return keygen(rest, stdout, stderr)
	case "conform":
		return conformCmd(ctx, rest, getenv, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (want serve, keygen or conform)", cmd)
}

// config is the configuration of serve; each flag has an environment twin.
type config struct {
	addr        string
	apiKeys     string
	apiKeysFile string
	logFormat   string
	rateLimit   *ratelimit.Limit // nil: no rate limiting
	databaseURL string
	pprofAddr   string // "": no profiling endpoint
	// idempotencyTTL is how long the outcome of a create with an
	// Idempotency-Key is kept.
	idempotencyTTL time.Duration
}

// The range of -idempotency-ttl: a retry comes seconds to hours later, and
// every key in the window is kept.
const (
	minIdempotencyTTL = time.Second
	maxIdempotencyTTL = 30 * 24 * time.Hour
)

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("petstore serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&cfg.addr, "addr", env("PETSTORE_ADDR", ":8080"), "listen address (PETSTORE_ADDR)")
	fs.StringVar(&cfg.apiKeys, "api-keys", env("PETSTORE_API_KEYS", ""), "comma-separated API keys, for development and CI (PETSTORE_API_KEYS)")
	fs.StringVar(&cfg.apiKeysFile, "api-keys-file", env("PETSTORE_API_KEYS_FILE", ""), "file of SHA-256 key digests, one a line (PETSTORE_API_KEYS_FILE)")
	fs.StringVar(&cfg.logFormat, "log-format", env("PETSTORE_LOG_FORMAT", "json"), "log format: json or text (PETSTORE_LOG_FORMAT)")
	rateLimit := fs.String("rate-limit", env("PETSTORE_RATE_LIMIT", ""), "requests per key: N/s or N/m, optionally ,burst=B; off when empty (PETSTORE_RATE_LIMIT)")
	fs.StringVar(&cfg.databaseURL, "database-url", env("PETSTORE_DATABASE_URL", ""), "PostgreSQL URL; the store is in memory when empty (PETSTORE_DATABASE_URL)")
	ttl := fs.String("idempotency-ttl", env("PETSTORE_IDEMPOTENCY_TTL", httpapi.DefaultIdempotencyTTL.String()), "how long the outcome of a create with an Idempotency-Key is kept, 1s to 720h (PETSTORE_IDEMPOTENCY_TTL)")
	fs.StringVar(&cfg.pprofAddr, "pprof", env("PETSTORE_PPROF_ADDR", ""), "serve net/http/pprof on this loopback address; off when empty (PETSTORE_PPROF_ADDR)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	d, err := time.ParseDuration(*ttl)
	if err != nil || d < minIdempotencyTTL || d > maxIdempotencyTTL {
		return cfg, fmt.Errorf("idempotency TTL %.64q: want a duration from 1s to 720h, such as 24h", *ttl)
	}
	cfg.idempotencyTTL = d
	if cfg.pprofAddr != "" && !loopback(cfg.pprofAddr) {
		return cfg, fmt.Errorf("pprof address %.64q: want a loopback host and a port, such as 127.0.0.1:6060", cfg.pprofAddr)
	}
	if *rateLimit != "" {
		l, err := ratelimit.Parse(*rateLimit)
		if err != nil {
			return cfg, fmt.Errorf("rate limit %.64q: %w", *rateLimit, err)
		}
		cfg.rateLimit = &l
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.logFormat != "json" && cfg.logFormat != "text" {
		return cfg, fmt.Errorf("log format %q: want json or text", cfg.logFormat)
	}
	return cfg, nil
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

// loadKeys builds the key set from the configuration. With no keys
// configured it generates one and prints it, once, on stderr.
func loadKeys(cfg config, stderr io.Writer) (*apikey.Set, error) {
	var digests []apikey.Digest
	if cfg.apiKeys != "" {
		ds, err := apikey.ParseKeys(cfg.apiKeys)
		if err != nil {
			return nil, fmt.Errorf("PETSTORE_API_KEYS: %w", err)
		}
		digests = append(digests, ds...)
	}
	if cfg.apiKeysFile != "" {
		f, err := os.Open(cfg.apiKeysFile)
		if err != nil {
			return nil, fmt.Errorf("PETSTORE_API_KEYS_FILE: %w", err)
		}
		ds, err := apikey.ParseDigests(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("PETSTORE_API_KEYS_FILE %s: %w", cfg.apiKeysFile, err)
		}
		digests = append(digests, ds...)
	}
	if len(digests) == 0 {
		key, digest, err := apikey.Generate()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "petstore: no API keys configured; this run accepts the generated key\n  %s\n", key)
		digests = append(digests, digest)
	}
	return apikey.NewSet(digests...), nil
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	out := newLogOut(stdout, stderr)
	log := newLogger(cfg.logFormat, out)
	keys, err := loadKeys(cfg, stderr)
	if err != nil {
		return err
	}
	store, storeName, closeStore, err := openStore(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer closeStore()
	hcfg := httpapi.Config{Store: store, Keys: keys, Logger: log, IdempotencyTTL: cfg.idempotencyTTL}
	if cfg.logFormat == "json" {
		hcfg.AccessLog = out // the same lines, appended without slog's machinery
	}
	if cfg.rateLimit != nil {
		hcfg.RateLimit = ratelimit.New(*cfg.rateLimit, time.Now)
	}
	app, err := httpapi.New(hcfg)
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
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{
		Handler:           app,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// "OPTIONS *" goes to the app (404 Error), not net/http's 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	limit := "off"
	if cfg.rateLimit != nil {
		limit = cfg.rateLimit.String()
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName, "keys", keys.Len(), "rate_limit", limit, "idempotency_ttl", cfg.idempotencyTTL.String())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
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

func keygen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("petstore keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "# API key: give it to the client; it is shown only this once.\n%s\n# Digest line: append it to the PETSTORE_API_KEYS_FILE.\n%s\n", key, digest)
	return err
}
