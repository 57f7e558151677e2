package httpapi

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/petstore/petstore/internal/ratelimit"
)

// retryAfter is the cause of an answer that tells when to retry (429, and
// 507 for Idempotency-Key outcomes): the seconds errorHandler puts in
// Retry-After, from 1 to 86 400 (ratelimit.RetrySeconds).
type retryAfter int

func (r retryAfter) Error() string { return fmt.Sprintf("retry after %d s", int(r)) }

var errNoKeyID = errors.New("rate limit: request not authenticated")

// rateLimit limits each authenticated key to the store's rate with Echo's
// rate-limiter middleware, and reports the key's quota on every answer in
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. It runs after
// authenticate, which names the key.
func rateLimit(store *ratelimit.Store[string]) echo.MiddlewareFunc {
	limit := store.Limit()
	limiter := middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store:               store,
		IdentifierExtractor: keyID,
		ErrorHandler:        func(_ echo.Context, err error) error { return err },
		DenyHandler: func(c echo.Context, id string, _ error) error {
			q := store.Quota(id)
			setQuota(c, q)
			return &apiError{
				Status:  429,
				Code:    codeRateLimited,
				Message: fmt.Sprintf("rate limit of %s exceeded for this key; retry after %d s", limit, q.RetryAfter),
				cause:   retryAfter(q.RetryAfter),
			}
		},
	})
	report := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id, _ := keyID(c) // the limiter has already refused a request without one
			setQuota(c, store.Quota(id))
			return next(c)
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc { return limiter(report(next)) }
}

// keyID returns the ID of the key authenticate accepted.
func keyID(c echo.Context) (string, error) {
	if cl := callOf(c); cl != nil && cl.caller != nil {
		return cl.caller.ID, nil
	}
	return "", errNoKeyID
}

func setQuota(c echo.Context, q ratelimit.Quota) {
	h := c.Response().Header()
	h.Set("RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(q.Reset))
}
