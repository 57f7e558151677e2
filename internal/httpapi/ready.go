package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/pets"
)

// readyTimeout bounds the store's Ping in /readyz. It is under the 1s probe
// timeout Kubernetes has by default, so that a slow store gets a 503 with a
// reason rather than a probe that timed out.
const readyTimeout = 900 * time.Millisecond

// pinger is a store that can tell whether it answers. A store without Ping
// (memstore) is always ready.
type pinger interface {
	Ping(ctx context.Context) error
}

// msgShuttingDown is /readyz's message once draining has begun.
const msgShuttingDown = "not ready: shutting down"

// readyz answers GET /readyz: 503 once draining is closed, by design (an
// INFO line, not an ERROR); else 200 when the store answers its Ping within
// readyTimeout, else 503 through the error mapper, a fault.
func readyz(store pets.Store, draining <-chan struct{}) echo.HandlerFunc {
	p, _ := store.(pinger)
	return func(c echo.Context) error {
		select {
		case <-draining: // a nil channel never is
			return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Message: msgShuttingDown, byDesign: true}
		default:
		}
		if p != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
			err := p.Ping(ctx)
			cancel()
			if err != nil {
				// The apiError decides the response; the cause goes to the log.
				return fmt.Errorf("%w: %w", &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Message: "not ready: the store does not answer"}, err)
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}
