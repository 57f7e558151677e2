// Package strict holds the API's input rules that go beyond what the OpenAPI
// validator checks, to the letter: query parameters defined and given once,
// integers in one spelling, a JSON Content-Type with no parameter but a
// UTF-8 charset, and a JSON body that is exactly one value, in valid UTF-8,
// with unique member names. Pure functions, no HTTP framework: each refusal
// is an *Error whose message is what the client is told.
package strict

import "fmt"

// Error is a refusal of input, in words for the client who sent it.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func refuse(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}
