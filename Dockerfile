# syntax=docker/dockerfile:1
# inferscale images; build with `make image` (docker build --target alpine|dcgm).
#
#   alpine (default, last stage): the CPA base image custompodautoscaler/alpine:v2.12.2 (musl) plus our pure-Go,
#          statically linked metric and evaluate, and exporter (the CPA pod's metrics sidecar,
#          deploy/overlays/exporter). Static binaries have no ELF interpreter, so musl does not matter.
#   dcgm:  a glibc (Debian) image carrying the same CPA binary plus a metric built with cgo and `-tags dcgm`
#          (go-dcgm). go-dcgm resolves DCGM symbols lazily after dlopen("libdcgm.so.4"), which musl cannot do: that
#          binary cannot even start on Alpine. libdcgm.so.4 is NOT in the image: mount it from the node (GPU Operator
#          host path) or build FROM NVIDIA's DCGM image with --build-arg DCGM_BASE=...; without it metric reports
#          DCGM as absent and carries on.
#
# deploy/image_test.go runs the RUN go build lines below with the same flags and checks every path this file and
# config/*.yaml refer to.
ARG GO_IMAGE=golang:1.26-bookworm
ARG CPA_IMAGE=custompodautoscaler/alpine:v2.12.2
ARG DCGM_BASE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/metric ./metric
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/evaluate ./evaluate
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/exporter ./exporter

FROM build AS build-dcgm
RUN CGO_ENABLED=1 go build -trimpath -tags dcgm -ldflags "-s -w" -o /out/metric-dcgm ./metric

FROM ${CPA_IMAGE} AS cpa

FROM ${DCGM_BASE} AS dcgm
RUN groupadd --system --gid 10001 inferscale \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin inferscale
COPY --from=cpa /app/custom-pod-autoscaler /app/custom-pod-autoscaler
COPY --from=build-dcgm /out/metric-dcgm /metric
COPY --from=build /out/evaluate /evaluate
COPY --from=build /out/exporter /exporter
COPY config/config.yaml /config.yaml
COPY config/config-prometheus.yaml /config-prometheus.yaml
WORKDIR /app
USER 10001:10001
CMD ["/app/custom-pod-autoscaler"]

FROM ${CPA_IMAGE} AS alpine
RUN addgroup -S -g 10001 inferscale && adduser -S -D -H -u 10001 -G inferscale -s /sbin/nologin inferscale
COPY --from=build /out/metric /out/evaluate /out/exporter /
COPY config/config.yaml /config.yaml
COPY config/config-prometheus.yaml /config-prometheus.yaml
WORKDIR /app
USER 10001:10001
CMD ["/app/custom-pod-autoscaler"]
