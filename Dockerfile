# The petstore image: the static binary, CA certificates (PostgreSQL over
# TLS) and a user database naming the non-root user 65532; no shell, no
# package manager. See docs/deploying.md.
#
#   docker build --build-arg VERSION=1.2.3 --build-arg REVISION=$(git rev-parse HEAD) -t petstore .
#
# image/host.Dockerfile is the same final stage over a binary built on the
# host (make image); image/image_test.go holds the two to the same lines.

# The Go of go.mod's go line (image_test.go checks they agree).
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# No .git in the context: Go records no revision, so it is stamped.
ARG REVISION=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /rootfs/petstore ./cmd/petstore
RUN mkdir -p /rootfs/etc/ssl/certs \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
 && cp image/passwd image/group /rootfs/etc/

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/petstore/petstore
LABEL org.opencontainers.image.title="petstore" \
      org.opencontainers.image.description="The Pet Store API's reference server" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
COPY --from=build /rootfs/ /
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/petstore"]
CMD ["serve"]
