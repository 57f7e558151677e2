package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

// The access line appended by hand is the line slog's JSONHandler writes for
// the same record, byte for byte: every ASCII byte, HTML characters,
// U+2028/U+2029, invalid UTF-8, both levels, times with and without
// fractions in other zones, and durations from zero up.
func TestAccessLineIsSlogs(t *testing.T) {
	strs := []string{"", "GET", apitest.Path("/pets/:petId"), "<>&", "\u2028\u2029", "\xff", "a\xc3", "héllo 漢字", `"\`, strings.Repeat("/x", 600)}
	for c := range 128 {
		strs = append(strs, "a"+string(rune(c))+"b")
	}
	times := []time.Time{
		time.Date(2026, 11, 22, 23, 54, 38, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 5*3600+1800)),
		time.Date(1999, 12, 31, 23, 59, 59, 100000000, time.FixedZone("", -8*3600)),
		time.Now(),
	}
	var slogged bytes.Buffer
	h := slog.NewJSONHandler(&slogged, nil)
	n := 0
	for i, s := range strs {
		for j, status := range []int{200, 201, 404, 500, 503} {
			e := accessEntry{
				at:        times[(i+j)%len(times)],
				method:    s,
				path:      strs[(i+1)%len(strs)],
				route:     strs[(i+2)%len(strs)],
				status:    status,
				latency:   time.Duration(i*j*j) * 12345,
				requestID: strs[(i+3)%len(strs)],
				keyID:     strs[(i+4)%len(strs)],
				traceID:   strs[(i+5)%len(strs)],
			}
			slogged.Reset()
			if err := h.Handle(context.Background(), e.record()); err != nil {
				t.Fatal(err)
			}
			if got := e.appendJSON(nil); !bytes.Equal(got, slogged.Bytes()) {
				t.Fatalf("entry %+v:\n got %s\nwant %s", e, got, slogged.Bytes())
			}
			n++
		}
	}
	t.Logf("%d lines equal", n)
}
