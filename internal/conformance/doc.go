// Package conformance holds the live contract check: a scenario suite, valid
// and invalid requests of every operation, sent through a Stoplight Prism
// validating proxy in front of the real server (`make conformance` starts
// both). A response Prism finds at odds with openapi.yaml fails the suite, and
// every response is also checked by kin-openapi through apitest.
package conformance
