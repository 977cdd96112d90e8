#!/usr/bin/env bash
# Regenerates all code from proto/: Go into gen/, TypeScript into
# clients/ts/src/gen/, the Go SDK's own copy into clients/go/seatghor/gen/ with
# its service list clients/go/seatghor/services.gen.go (buf.gen.sdk.yaml,
# decision 0195), and the OpenAPI description of the REST routes into
# gen/openapi/ (gnostic's protoc-gen-openapi, finished by tools/openapipost,
# decision 0197); and from the reasons of proto/seatghor/errors/v1/reason.proto
# (tools/protoc-gen-seatghor-reasons, decision 0318) docs/errors.md, the
# server's server/fault/reasons.gen.go and server/api/reasons.gen.go, and the
# SDKs' clients/go/seatghor/reasons.gen.go and clients/ts/src/reasons.gen.ts.
# Idempotent: output depends only on the .proto files and
# the pinned tool versions (tools/go.mod, clients/ts/package-lock.json).
# Last, the index of the decision records, docs/decisions/README.md, from
# their titles and docs/decisions/index.txt (scripts/decisionsindex).
#
# proto-imports/ (buf/validate, google/api) is only an import path, never
# generated; refresh it with: go run -C tools ./printproto -out ../proto-imports
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [[ ! -x clients/ts/node_modules/.bin/protoc-gen-es ]]; then
  (cd clients/ts && npm ci --no-audit --no-fund)
fi

rm -rf gen clients/ts/src/gen clients/go/seatghor/gen clients/go/seatghor/services.gen.go

go tool -modfile=tools/go.mod buf generate
go tool -modfile=tools/go.mod buf generate --template buf.gen.sdk.yaml

# OpenAPI: gnostic writes its draft into a temporary directory; openapipost
# adds the security scheme, the Idempotency-Key header (by each RPC's
# idempotency_level, read from the buf image), the required fields (by the
# protovalidate rules in it), the errors and what else Redocly's
# recommended rules ask for (`make lint-openapi`, decision 0329).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go tool -modfile=tools/go.mod buf generate --template buf.gen.openapi.yaml -o "$tmp"
go tool -modfile=tools/go.mod buf build -o "$tmp/image.binpb"
go run -C tools ./openapipost -in "$tmp/openapi.yaml" -image "$tmp/image.binpb" -out "$root/gen/openapi"

go run ./scripts/decisionsindex -dir docs/decisions
