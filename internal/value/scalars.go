package value

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/strict"
	"github.com/petstore/petstore/internal/value/canon"
)

// number is n, a value of the facets, in its canonical form: an integer
// (held to the letter in a request) in plain digits, a float or a double
// rounded to its type, any other number its exact value.
func (w walker) number(n json.Number, facets []*openapi3.Schema, path string) (json.Number, error) {
	kind, format := numberKind(facets)
	if kind == "integer" && w.mode == answer && !bigInt(n) {
		return n, nil // an integer is answered in plain digits: 1.0 is not one
	}
	if kind == "integer" && w.mode == request {
		rule := strict.Int64
		if format == "int32" {
			rule = strict.Int32
		}
		_, err := rule.JSON(path, n)
		if err != nil && (format != "" || !bigInt(n)) {
			return "", err
		}
		if len(n) <= canon.MaxIntegerDigits && n != "-0" {
			return n, nil // plain digits (JSON allows no leading zero): canonical
		}
	}
	d, err := canon.ParseDecimal(string(n))
	if err != nil {
		if w.mode == request {
			return "", refuse(path, "not a number a program can hold")
		}
		return n, nil
	}
	switch {
	case kind == "integer" && d.IsInteger():
		return json.Number(d.AppendInteger(nil)), nil
	case kind == "number" && (format == "float" || format == "double"):
		bits, most := 32, "3.4028234663852886e+38"
		if format == "double" {
			bits, most = 64, "1.7976931348623157e+308"
		}
		f, err := strconv.ParseFloat(string(n), bits)
		if err != nil || math.IsInf(f, 0) {
			if w.mode == request {
				return "", refuse(path, "number must be within the range of a %s: at most %s in magnitude", format, most)
			}
			break
		}
		return json.Number(canon.FloatDecimal(f, bits).Append(nil)), nil
	}
	return json.Number(d.Append(nil)), nil
}

// numberKind is the type the facets give a number (integer before number)
// and the first format of that type.
func numberKind(facets []*openapi3.Schema) (kind, format string) {
	for _, k := range []string{"integer", "number"} {
		for _, f := range facets {
			if f.Type.Is(k) {
				if kind == "" {
					kind = k
				}
				if format == "" {
					format = f.Format
				}
			}
		}
		if kind != "" {
			return kind, format
		}
	}
	return "", ""
}

// bigInt reports whether n is an integer literal (no fraction, no
// exponent) beyond int64: an integer without a format may be one.
func bigInt(n json.Number) bool {
	for i, c := range []byte(n) {
		if !(c >= '0' && c <= '9' || c == '-' && i == 0) {
			return false
		}
	}
	return len(n) > 0
}

// str is s, a value of the facets, in its canonical form: a date-time the
// instant it names, in UTC; any other string as it is.
func (w walker) str(s string, facets []*openapi3.Schema, path string) (string, error) {
	for _, f := range facets {
		if f.Format != "date-time" || !f.Type.Permits("string") {
			continue
		}
		t, err := ParseDateTime(s)
		if err != nil {
			if w.mode == request {
				return "", refuse(path, "%v", err)
			}
			return s, nil
		}
		return FormatDateTime(t), nil
	}
	return s, nil
}

// dateTimeRE is RFC 3339's date-time (section 5.6).
var dateTimeRE = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$`)

var errDateTime = errors.New("must be an RFC 3339 date-time naming an instant of the years 0000 to 9999 in UTC, without a leap second")

// ParseDateTime reads s, an RFC 3339 date-time, as the instant it names,
// to the nanosecond (digits of a fraction past the ninth are dropped). It
// refuses a day, hour, minute, second or offset out of its range, a leap
// second (second 60, which no instant of a clock without them names) and
// an instant outside the years 0000 to 9999 in UTC, which RFC 3339 cannot
// write in UTC.
func ParseDateTime(s string) (time.Time, error) {
	m := dateTimeRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, errDateTime
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	year, month, day, hour, minute, second := n(1), n(2), n(3), n(4), n(5), n(6)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, errDateTime
	}
	frac := m[7]
	if len(frac) > 9 {
		frac = frac[:9]
	}
	ns := 0
	if frac != "" {
		ns, _ = strconv.Atoi(frac + "000000000"[len(frac):])
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, ns, time.UTC)
	if m[8] == "" {
		oh, om := n(10), n(11)
		if oh > 23 || om > 59 {
			return time.Time{}, errDateTime
		}
		off := time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
		if m[9] == "+" {
			off = -off
		}
		t = t.Add(off)
	}
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, errDateTime
	}
	return t, nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// FormatDateTime is t's canonical date-time: UTC, the fraction without
// its trailing zeros (none for a whole second).
func FormatDateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999") + "Z"
}
