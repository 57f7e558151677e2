// Package conformance holds the kit's runs against real peers, which `make
// conformance` (.ci/conformance.sh) starts on loopback ports: the conformance
// kit (internal/conform) sent through Stoplight Prism's validating proxy in
// front of bin/petstore, where any response Prism finds at odds with
// openapi.yaml fails; and the kit against Prism's mock, whose failed checks
// are pinned. Without the environment the script sets, the tests skip.
package conformance
