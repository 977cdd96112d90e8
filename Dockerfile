# syntax=docker/dockerfile:1
# The production image of seatghor (docs/operations.md): one static binary,
# run as a non-root user on a distroless base with nothing else in it. The
# same image runs every role (SEATGHOR_ROLES), `migrate` and `gateway`;
# `dev` is not for images (it needs the PostgreSQL server binaries).
#
#   docker build -t seatghor .

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: a static binary that runs on the distroless base.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/seatghor ./cmd/seatghor

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/seatghor /usr/local/bin/seatghor
# Listen on every interface inside the container; the admin listener
# (metrics, probes, pprof) stays on its own port, which is not published.
ENV SEATGHOR_ADDR=0.0.0.0:8080 \
    SEATGHOR_ADMIN_ADDR=0.0.0.0:9090 \
    SEATGHOR_LOG_FORMAT=json
EXPOSE 8080 9090
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/seatghor"]
CMD ["serve"]
