package telemetry

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/httpapi"
)

// operationIDs maps "METHOD route", as Echo names a route (c.Path(): the
// base path, then {param} written :param), to the contract's operation id.
func operationIDs() (map[string]string, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("tracing: load embedded spec: %w", err)
	}
	ids := map[string]string{}
	for path, item := range spec.Paths.Map() {
		route := httpapi.BasePath() + strings.NewReplacer("{", ":", "}", "").Replace(path)
		for method, op := range item.Operations() {
			ids[method+" "+route] = op.OperationID
		}
	}
	return ids, nil
}

// nameSpan names the server span otelhttp started once Echo has routed the
// request, and sets its http.route: a contract operation by its operation
// id (getPet), an operator endpoint by method and route (GET /healthz), a
// request that matched no route by its method alone (as otelhttp named it):
// Echo's c.Path() is always a registered route, so no client-chosen path
// becomes a span name.
func nameSpan(ops map[string]string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			route := c.Path()
			if route == "" { // Echo matched nothing
				return next(c)
			}
			span := trace.SpanFromContext(c.Request().Context())
			key := c.Request().Method + " " + route
			if id := ops[key]; id != "" {
				span.SetName(id)
			} else {
				span.SetName(key)
			}
			span.SetAttributes(semconv.HTTPRoute(route))
			return next(c)
		}
	}
}
