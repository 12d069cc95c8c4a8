# The weir image the generated Argo WorkflowTemplates and KubernetesPodOperator
# tasks run (generate --image, or deploy: image: in the dagfile):
#
#   docker build -t weir:latest .
#
# weir links DuckDB through cgo (models need it),
# so the builder has a C toolchain and the runtime a glibc. Not built in CI
# here: the CI machines cannot pull base images. The dagfile is not in the
# image: mount it (a ConfigMap or a volume) or build FROM this image with
# COPY weir.yaml /weir/ and set deploy: dagfile: /weir/weir.yaml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/weir ./cmd/weir

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --create-home --home-dir /weir weir
COPY --from=build /out/weir /usr/local/bin/weir
USER weir
WORKDIR /weir
ENTRYPOINT ["weir"]
