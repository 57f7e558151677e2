# The petstore image over a binary built on the host: make image assembles
# the build context (bin/image: rootfs/ with the binary, the CA certificates
# and image/passwd, image/group) and builds this. The final stage is the
# Dockerfile's, line for line (image_test.go checks it).
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/petstore/petstore
LABEL org.opencontainers.image.title="petstore" \
      org.opencontainers.image.description="The Pet Store API's reference server" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
COPY rootfs/ /
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/petstore"]
CMD ["serve"]
