package judge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/wire"
)

// Outcome is what the contract wants of an answer: a case's wanted answer.
type Outcome struct {
	Status []int                  // the answer's status is one of these; none: any 2xx
	Code   string                 // and its Error code this one, when set
	Also   func(*Exchange) string // and this holds: "" when it does, what it wants otherwise
}

// And adds a rule on the answer.
func (o Outcome) And(f func(*Exchange) string) Outcome {
	prev := o.Also
	o.Also = func(x *Exchange) string {
		if prev != nil {
			if w := prev(x); w != "" {
				return w
			}
		}
		return f(x)
	}
	return o
}

// Judge says whether x keeps o, and what o wants of the answer to label.
func (o Outcome) Judge(x *Exchange, label string) (bool, string) {
	var want string
	ok := slices.Contains(o.Status, x.Status)
	switch {
	case len(o.Status) == 0:
		want, ok = "2xx", x.Status/100 == 2
	case len(o.Status) == 1:
		want = strconv.Itoa(o.Status[0])
	default:
		want = strings.Trim(strings.ReplaceAll(fmt.Sprint(o.Status), " ", " or "), "[]")
	}
	if o.Code != "" {
		want += " " + o.Code
		code, isError := wire.ErrorCode(x.Body)
		ok = ok && isError && code == o.Code
	}
	want += " for " + label
	if ok && o.Also != nil {
		if w := o.Also(x); w != "" {
			return false, want + ", " + w
		}
	}
	return ok, want
}
