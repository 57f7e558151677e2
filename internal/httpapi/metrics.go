package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/storemetrics"
)

// countTimeout bounds the store's Count at scrape time.
const countTimeout = time.Second

// counter is a store that can count its pets cheaply. With one, /metrics
// has the petstore_pets gauge; without, it has none.
type counter interface {
	Count(ctx context.Context) (int64, error)
}

// noneLabel is the operation label of requests that matched no route (404s):
// never the raw path, which a client could make unbounded.
const noneLabel = "none"

// requestBuckets span an in-memory answer (about 100µs) to the write
// timeout (15s, past the last bucket).
var requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// metrics are one app's Prometheus metrics, in a registry of its own: not the
// process-wide default, so that apps in one process (tests) do not collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// routes are the request series by Echo route path; none the series
	// of requests that matched no route. Filled by addRoutes before the app
	// serves, read-only after.
	routes map[string]*route
	none   *series
}

// route is the request series of one route path: the operations on it by
// method, and other for any other method (405s) or a route that is not an
// API operation (/healthz), labelled with the route path.
type route struct {
	ops   []methodSeries
	other *series
}

type methodSeries struct {
	method string
	series *series
}

// series are the request metrics of one operation label, with the children
// for each status code made on first use and kept, so that counting a request
// costs no label hashing and no allocation.
type series struct {
	m  *metrics
	op string // the label: an operation id, a route path, or noneLabel
	// route is the Echo route path the series counts ("" for none), and
	// operation whether op is an operation id of the table (RouteOf).
	route     string
	operation bool
	codes     [600]atomic.Pointer[child] // by status code; 0 for one out of range
}

type child struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// newMetrics makes the registry and everything in it but the per-route series
// (see addRoutes), and returns the store measured by it. version and
// revision label petstore_build_info.
func newMetrics(store pets.Store, version, revision string) (*metrics, pets.Store, error) {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "petstore_http_requests_total",
			Help: "HTTP requests answered, by operation (operation id, route path, or none for no route) and status code.",
		}, []string{"operation", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "petstore_http_request_duration_seconds",
			Help:    "Time from routing to the last middleware's return, by operation and status code.",
			Buckets: requestBuckets,
		}, []string{"operation", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "petstore_http_requests_in_flight",
			Help: "HTTP requests being served.",
		}),
		routes: map[string]*route{},
	}
	m.none = &series{m: m, op: noneLabel}
	cs := []prometheus.Collector{
		m.requests, m.latency, m.inFlight,
		buildInfo(version, revision),
		collectors.NewBuildInfoCollector(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	if c, ok := store.(counter); ok {
		cs = append(cs, petCount{store: c, desc: prometheus.NewDesc("petstore_pets", "Pets in the store, counted at scrape time.", nil, nil)})
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, nil, fmt.Errorf("httpapi: register metrics: %w", err)
		}
	}
	measured, err := storemetrics.Instrument(store, m.reg)
	if err != nil {
		return nil, nil, fmt.Errorf("httpapi: register store metrics: %w", err)
	}
	return m, measured, nil
}

// addRoutes makes the series of every route of e: the table's operations
// by their operation id, other routes (and other methods) by their path.
func (m *metrics) addRoutes(e *echo.Echo, ops *operations) error {
	for _, r := range e.Routes() {
		if m.routes[r.Path] == nil {
			m.routes[r.Path] = &route{other: &series{m: m, op: r.Path, route: r.Path}}
		}
	}
	for _, op := range ops.list {
		r := m.routes[op.route]
		if r == nil {
			return fmt.Errorf("httpapi: metrics: no route for %s", op.key())
		}
		r.ops = append(r.ops, methodSeries{method: op.method, series: &series{m: m, op: op.id, route: op.route, operation: true}})
	}
	return nil
}

// lookup returns the series of a request by its route path and method.
func (m *metrics) lookup(path, method string) *series {
	r := m.routes[path]
	if r == nil {
		return m.none
	}
	for _, o := range r.ops {
		if o.method == method {
			return o.series
		}
	}
	return r.other
}

// child returns the children for status code, making them on first use.
func (s *series) child(code int) *child {
	if code < 100 || code >= len(s.codes) {
		code = 0
	}
	if c := s.codes[code].Load(); c != nil {
		return c
	}
	label := "other"
	if code != 0 {
		label = strconv.Itoa(code)
	}
	// Two requests racing here get the same children from the vectors.
	c := &child{requests: s.m.requests.WithLabelValues(s.op, label), latency: s.m.latency.WithLabelValues(s.op, label)}
	s.codes[code].Store(c)
	return c
}

// count counts and times a request of the series by its final status.
func (s *series) count(status int, latency time.Duration) {
	ch := s.child(status)
	ch.requests.Inc()
	ch.latency.Observe(latency.Seconds())
}

// handler serves the registry in Prometheus's formats. A collector that fails
// (the pet count when the store does not answer) is logged and left out; the
// rest of the scrape is still served.
func (m *metrics) handler(log *slog.Logger) echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // counts its own errors: promhttp_metric_handler_errors_total
	}))
}

// petCount is the petstore_pets gauge, read from the store at each scrape.
type petCount struct {
	store counter
	desc  *prometheus.Desc
}

func (p petCount) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p petCount) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
	defer cancel()
	n, err := p.store.Count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(p.desc, fmt.Errorf("count pets: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(n))
}

// buildInfo is petstore_build_info, always 1, labelled with the build's
// version and VCS revision ("unknown" when empty) and the Go version.
func buildInfo(version, revision string) prometheus.Gauge {
	if version == "" {
		version = "unknown"
	}
	if revision == "" {
		revision = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "petstore_build_info",
		Help:        "Always 1; the labels say what was built: version, VCS revision (as petstore version prints them), Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "go_version": runtime.Version()},
	})
	g.Set(1)
	return g
}
