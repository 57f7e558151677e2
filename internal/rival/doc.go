// Package rival holds the plain rival (issue 59, item 4): a second
// implementation of the Pet Store contract, written the way an oapi-codegen
// user writes one, that the conformance kit must pass on every spec it is
// given and fail with each defect planted in it.
//
// The rival itself (./server, built with -tags rival) is an Echo app over
// the models and strict-server interface oapi-codegen generates from the
// spec under test: typed structs (float32 for format float, time.Time for
// date-time, pointers for optional and nullable members) kept in a map
// behind a mutex, kin-openapi's request validator applying defaults, and
// the contract's Idempotency-Key and paging written as its text says. Its
// generated package (./api) exists only in the tests: TestRival generates it
// into a temporary directory with the module's pinned oapi-codegen and hands
// it to the compiler with go build -overlay, so the rival follows the spec
// it is run on (each evolution-drill variant's too) with no file written
// here.
//
// What is the rival's own: the data (the typed models, NewPet made a Pet
// through JSON, times kept in UTC), the Idempotency-Key (outcomes by API key
// and key, a request the same when its typed NewPet marshals the same),
// paging, auth, CORS, the Error bodies. What it takes from this module, as a
// user takes a library: package strict's input rules to the letter (one
// spelling of an integer, unique member names, the Content-Type) and
// httpapi.Listener, which answers what net/http refuses before any handler
// (a head too large, a malformed request) with the contract's Error. Its
// plants (server/defects.go) are each caught by the check rival_test.go
// names; package transform's legal transformations of its answers fail no
// check.
package rival
