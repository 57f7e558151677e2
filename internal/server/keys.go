package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/petstore/petstore/internal/apikey"
)

// serveKeys is the key set serve checks requests with.
type serveKeys struct {
	source   apikey.Source
	reloader *apikey.Reloader // nil without a keys file
	// generated is the key made when none is configured: printed once the
	// server listens, so that a run that fails to start prints none.
	generated string
}

// loadKeys builds the key set from the configuration: the keys of
// -api-keys, fixed for the life of the process, and the digests of
// -api-keys-file, which the reloader re-reads on SIGHUP and on change.
// With no keys configured it generates one.
func loadKeys(cfg Config, log *slog.Logger) (serveKeys, error) {
	if cfg.KeysFile != "" {
		r, err := apikey.NewReloader(cfg.KeysFile, cfg.Keys, log)
		var pe *fs.PathError
		if errors.As(err, &pe) { // the error names the file
			return serveKeys{}, fmt.Errorf("%s: %w", cfg.Sources["api-keys-file"], err)
		}
		if err != nil {
			return serveKeys{}, fmt.Errorf("%s %s: %w", cfg.Sources["api-keys-file"], cfg.KeysFile, err)
		}
		return serveKeys{source: r, reloader: r}, nil
	}
	if len(cfg.Keys) > 0 {
		return serveKeys{source: apikey.NewSet(cfg.Keys...)}, nil
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return serveKeys{}, err
	}
	return serveKeys{source: apikey.NewSet(digest), generated: key}, nil
}

// reloadKeys runs r until Run returns, the drain included: on SIGHUP and
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
