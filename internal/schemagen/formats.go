package schemagen

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/petstore/petstore/internal/value"
)

// formats draw a string of each format OpenAPI and JSON Schema name, valid
// by its RFC (kin-openapi checks date, date-time and byte by default, and
// the others when a program registers them); a format not here is a plain
// string. Choice 0 is the simplest value of each.
var formats = map[string]func(g *Generator) string{
	"date":      func(g *Generator) string { return g.date() },
	"date-time": func(g *Generator) string { return g.dateTime() },
	"time":      func(g *Generator) string { return g.clock() },
	"byte": func(g *Generator) string {
		b := make([]byte, g.pick(48))
		for i := range b {
			b[i] = byte(g.pick(256))
		}
		return base64.StdEncoding.EncodeToString(b)
	},
	"email": func(g *Generator) string {
		return g.token("abcdefghijklmnopqrstuvwxyz0123456789._+-", 1, 24) + "@" + g.hostname()
	},
	"hostname": func(g *Generator) string { return g.hostname() },
	"uri": func(g *Generator) string {
		return "https://" + g.hostname() + "/" + g.token("abcdefghijklmnopqrstuvwxyz0123456789-._~/", 0, 32)
	},
	"uuid": func(g *Generator) string {
		h := g.token("0123456789abcdef", 32, 32)
		return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[g.pick(4)]) + h[17:20] + "-" + h[20:]
	},
	"ipv4": func(g *Generator) string {
		return fmt.Sprintf("%d.%d.%d.%d", g.pick(256), g.pick(256), g.pick(256), g.pick(256))
	},
	"ipv6": func(g *Generator) string {
		parts := make([]string, 8)
		for i := range parts {
			parts[i] = fmt.Sprintf("%x", g.pick(1<<16))
		}
		return strings.Join(parts, ":")
	},
}

func init() {
	formats["uri-reference"] = formats["uri"]
	formats["url"] = formats["uri"]
}

// token draws from lo to hi characters of set.
func (g *Generator) token(set string, lo, hi int) string {
	n := lo + g.pick(hi-lo+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.pick(len(set))]
	}
	return string(b)
}

func (g *Generator) hostname() string {
	labels := make([]string, 1+g.pick(3))
	for i := range labels {
		labels[i] = "a" + g.token("abcdefghijklmnopqrstuvwxyz0123456789", 0, 10)
	}
	return strings.Join(labels, ".") + ".example"
}

var monthDays = [12]int{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// date draws a calendar date: the epoch, the first or last day of the
// four-digit years, or any day.
func (g *Generator) date() string {
	switch g.pick(4) {
	case 0:
		return "1970-01-01"
	case 1:
		return "0001-01-01"
	case 2:
		return "9999-12-31"
	}
	y, m := 1+g.pick(9999), 1+g.pick(12)
	d := 1 + g.pick(monthDays[m-1])
	if m == 2 && d == 29 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		d = 28
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

// clock draws a time of day with an offset, RFC 3339's full-time.
func (g *Generator) clock() string {
	t := fmt.Sprintf("%02d:%02d:%02d", g.pick(24), g.pick(60), g.pick(60))
	if g.pick(2) == 1 {
		t += "." + g.token("0123456789", 1, 9)
	}
	switch g.pick(3) {
	case 0:
		return t + "Z"
	case 1:
		return t + fmt.Sprintf("+%02d:%02d", g.pick(15), 15*g.pick(4))
	}
	return t + fmt.Sprintf("-%02d:%02d", g.pick(13), 15*g.pick(4))
}

// dateTime draws a date-time: a date and a time with an offset, in UTC
// (Z) when the offset would take the instant outside the years RFC 3339
// writes in UTC, whose round trip the contract leaves undefined
// (value.ParseDateTime).
func (g *Generator) dateTime() string {
	s := g.date() + "T" + g.clock()
	if _, err := value.ParseDateTime(s); err != nil {
		s = s[:len("2006-01-02T15:04:05")] + "Z"
	}
	return s
}
