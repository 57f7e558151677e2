package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Signals returns a context that ends at the first SIGTERM or SIGINT and
// whose skip channel (WithSkipDelay) closes at the second. After the
// second, the signals' default action is back: a third ends the process at
// once.
func Signals(parent context.Context) context.Context {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(parent)
	skip := make(chan struct{})
	go func() {
		<-ch
		cancel()
		<-ch
		close(skip)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	return WithSkipDelay(ctx, skip)
}

type skipDelayKey struct{}

// WithSkipDelay returns ctx carrying skip: once it is closed, Run cuts its
// shutdown delay short.
func WithSkipDelay(ctx context.Context, skip <-chan struct{}) context.Context {
	return context.WithValue(ctx, skipDelayKey{}, skip)
}

// skipDelay returns ctx's skip channel; nil (never closed) when it has none.
func skipDelay(ctx context.Context) <-chan struct{} {
	skip, _ := ctx.Value(skipDelayKey{}).(<-chan struct{})
	return skip
}

// serveUntilDrained serves on ln until ctx ends; then, after shutdownDelay
// (cut short by a second signal), it stops accepting, lets the requests in
// flight finish, and writes the access lines still buffered.
func serveUntilDrained(ctx context.Context, srv *http.Server, ln net.Listener, shutdownDelay time.Duration, log *slog.Logger, access interface{ Flush() error }) error {
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
	access.Flush() // every request's line before "stopped"
	log.Info("stopped")
	return nil
}
