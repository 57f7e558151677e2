package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/petstore/internal/pets"
)

// store is a pets.Store that puts each call in a span, child of the request's
// server span: "store create", "store get", "store list". No library traces a
// pets.Store; on PostgreSQL otelpgx's query spans are its children. A span
// carries the operation and, for a get, the pet's id: never a pet's fields,
// an idempotency key or its owner. The store is embedded: a method added to
// pets.Store with an operation passes through without an edit here, in the
// span of its request (named by its operation), until a method of its own
// here gives it a span of the store.
type store struct {
	pets.Store
	tracer trace.Tracer
}

var opAttr = attribute.Key("petstore.store.operation")

func wrapStore(s pets.Store, tracer trace.Tracer) pets.Store {
	return store{Store: s, tracer: tracer}
}

func (s store) start(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, "store "+op, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(append(attrs, opAttr.String(op))...))
}

func (s store) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	ctx, span := s.start(ctx, "create")
	defer span.End()
	p, err := s.Store.Create(ctx, n)
	end(span, err)
	return p, err
}

func (s store) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	ctx, span := s.start(ctx, "create", attribute.Bool("petstore.idempotent", true))
	defer span.End()
	p, replayed, err := s.Store.CreateOnce(ctx, n, k)
	if err == nil {
		span.SetAttributes(attribute.Bool("petstore.replayed", replayed))
	}
	end(span, err)
	return p, replayed, err
}

func (s store) Get(ctx context.Context, id int64) (pets.Pet, error) {
	ctx, span := s.start(ctx, "get", attribute.Int64("petstore.pet.id", id))
	defer span.End()
	p, err := s.Store.Get(ctx, id)
	end(span, err)
	return p, err
}

func (s store) List(ctx context.Context, q pets.Query) (pets.Page, error) {
	ctx, span := s.start(ctx, "list")
	defer span.End()
	page, err := s.Store.List(ctx, q)
	end(span, err)
	return page, err
}

// end marks the span failed for an error the client did not cause, with a
// fixed description: an error's text may quote what the client sent. A
// missing pet, a refused pet or a reused idempotency key is an answer.
func end(span trace.Span, err error) {
	if err == nil {
		return
	}
	var ve *pets.ValidationError
	switch {
	case errors.Is(err, pets.ErrNotFound):
		span.SetAttributes(attribute.String("error.type", "not_found"))
	case errors.As(err, &ve), errors.Is(err, pets.ErrKeyReused), errors.Is(err, pets.ErrKeyInFlight):
		span.SetAttributes(attribute.String("error.type", "refused"))
	case errors.Is(err, context.Canceled): // first: a caller that gave up is no outage
		span.SetStatus(codes.Error, "canceled")
		span.SetAttributes(attribute.String("error.type", "canceled"))
	case errors.Is(err, pets.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		span.SetStatus(codes.Error, "store unavailable")
		span.SetAttributes(attribute.String("error.type", "unavailable"))
	default:
		span.SetStatus(codes.Error, "store error")
		span.SetAttributes(attribute.String("error.type", "error"))
	}
}
