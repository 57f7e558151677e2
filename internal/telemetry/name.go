package telemetry

import (
	"github.com/labstack/echo/v4"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/petstore/internal/httpapi"
)

// nameSpan names the server span otelhttp started once Echo has routed the
// request, and sets its http.route, as the app's operation table names the
// route (httpapi.RouteOf): a contract operation by its operation id
// (getPet), an operator endpoint by method and route (GET /healthz). A
// request that matched no route keeps the name otelhttp gave it, its method
// alone: no client-chosen path becomes a span name.
func nameSpan(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, route := httpapi.RouteOf(c)
		if route == "" { // Echo matched nothing
			return next(c)
		}
		span := trace.SpanFromContext(c.Request().Context())
		span.SetName(name)
		span.SetAttributes(semconv.HTTPRoute(route))
		return next(c)
	}
}
