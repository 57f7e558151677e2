package cases

import (
	"strconv"
	"time"

	"github.com/petstore/petstore/internal/value"
)

// Bounds are the limits the spec being checked sets, read from it, never
// assumed: a new major may lower them.
type Bounds struct {
	LimitMax     int           // the listing's limit maximum
	LimitDefault int           // and its default (the maximum without one)
	BodyMax      int64         // the largest body the spec allows (x-rules body-size); 0 unstated
	HeadMax      int           // the largest request line and headers it allows (head-size); 0 unstated
	HeadTimeout  time.Duration // the time a request head may take to arrive (head-timeout); 0 unstated
	Retention    time.Duration // how long a create's outcome is kept for its Idempotency-Key (retention); 0 unstated
}

// FindBounds reads the bounds from the spec: the listing's limit from
// the parameter of roles' listing, the others from the figures the spec's
// x-rules give (number: the figure under key of the sentence name, 0 when
// none).
func FindBounds(roles Roles, number func(name, key string) float64) Bounds {
	b := Bounds{LimitMax: 100, LimitDefault: 100}
	if roles.List != nil {
		for _, p := range roles.List.Query {
			if p.Name != "limit" || p.Schema == nil || p.Schema.Value == nil {
				continue
			}
			s := Flat(p.Schema.Value)
			_, hi := IntBounds(s)
			if hi.IsInt64() && hi.Int64() < 1<<20 {
				b.LimitMax = int(hi.Int64())
			}
			b.LimitDefault = b.LimitMax
			d, _ := value.Default(p.Schema.Value)
			if n, err := strconv.Atoi(value.NormalText(d)); err == nil && n >= 1 && n <= b.LimitMax {
				b.LimitDefault = n
			}
		}
	}
	if n := number("body-size", "maxBytes"); n >= 1 && n <= 1<<30 {
		b.BodyMax = int64(n)
	}
	if n := number("head-size", "maxBytes"); n >= 1 && n <= 1<<20 { // the kit sends that many bytes
		b.HeadMax = int(n)
	}
	if n := number("head-timeout", "seconds"); n > 0 {
		b.HeadTimeout = time.Duration(n * float64(time.Second))
	}
	if n := number("retention", "hours"); n > 0 {
		b.Retention = time.Duration(n * float64(time.Hour))
	}
	return b
}
