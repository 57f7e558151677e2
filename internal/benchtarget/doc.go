// Package benchtarget holds the two servers `make bench` (.ci/load) measures
// the real binary against, over loopback with the same load. They are
// benchmark programs, never served: each is a main package under internal/,
// built only by .ci/load, so no release or `go install` of the module ships
// them, and cmd/petstore keeps no mode that turns its checks off.
//
//   - bare: the plain form of this stack on this spec, the shape of
//     oapi-codegen's examples/petstore-expanded/echo: Echo, echo-middleware's
//     stock OapiRequestValidator (its own router), the same handlers and
//     memory store, no other middleware.
//   - floor: net/http alone: no framework, no validation, the same store and
//     JSON shapes.
package benchtarget
