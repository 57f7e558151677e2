// Package image holds the container image's files (the Dockerfile's final
// stage over a host-built binary, the user database) and its tests: the
// Dockerfiles agree with each other and with go.mod, and, with
// PETSTORE_TEST_IMAGE=1 (make test-image), the built image is checked by
// content and its binary run on the host.
package image
