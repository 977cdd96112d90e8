#!/usr/bin/env bash
# Installs what `make run` (`ensure-deps.sh run`) and `make test`
# (`ensure-deps.sh test`, the default) need beyond Go and Node.js, and
# nothing when it is already there (so it is silent on a ready machine).
# `run` installs only what `seatghor dev` uses: the PostgreSQL binaries and
# redis-server. `web` only the npm packages `make web` builds the site with
# (clients/ts and clients/web), `sdk` only the TypeScript client's, which
# `make sdk` packs, and `openapi` only Redocly CLI, which `make
# lint-openapi` lints the OpenAPI description with (tools/redocly). `test`
# adds the rest:
#
#   - the PostgreSQL server binaries (Debian package `postgresql`): `seatghor
#     dev` and the Go tests (internal/testkit/pgtest) start throwaway clusters from
#     /usr/lib/postgresql/*/bin/initdb. The package's own cluster is not
#     used and not started: tests use 127.0.0.1:5432 only if it accepts
#     user postgres without a password, else they start their own.
#   - redis-server (Debian package `redis-server`): the Go tests of the seat
#     map (internal/testkit/redistest) use 127.0.0.1:6379 if it answers, else start
#     their own redis-server on a free port; `seatghor dev` starts one too
#     (without it, dev falls back to an in-process Redis). The package's
#     own service is not started.
#   - redis-cli (Debian package `redis-tools`): the Redis Cluster tests
#     (internal/testkit/redistest) start six redis-server nodes and join them with
#     `redis-cli --cluster create`.
#   - clients/ts/node_modules (npm ci), for code generation and the
#     TypeScript client test, clients/web/node_modules (npm ci) for the
#     site's build (esbuild; the site imports the client from clients/ts),
#     and tools/redocly/node_modules (npm ci) for the OpenAPI lint.
#   - Chromium (Debian package `chromium`, /usr/bin/chromium): the site's
#     browser tests (clients/web) drive it headless.
#   - the Meilisearch server binary for the trip-index tests
#     (scripts/install-meilisearch.sh, into ~/.cache/seatghor).
#   - the minio server binary, built once from source (go install) into
#     ~/.cache/seatghor/minio-<version>/ (internal/testkit/miniotest): the e-ticket
#     tests run it as a separate process (it is AGPL; never linked,
#     decision 0041). The version must match miniobin.Version.
#   - pdftoppm (Debian package `poppler-utils`): the e-ticket test renders
#     the PDFs to images and compares them with its reference images
#     (projections/eticket, decision 0171).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

for_what=${1:-test}
case $for_what in
run | test | web | sdk | openapi) ;;
*)
  echo "usage: ensure-deps.sh [run|test|web|sdk|openapi]" >&2
  exit 2
  ;;
esac

have_postgres() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || return 1
  # As root, the clusters run as the OS user postgres (initdb refuses root);
  # the package creates that user.
  [[ $(id -u) -ne 0 ]] || getent passwd postgres >/dev/null
}

# apt_install installs one Debian package as root, keeping the package from
# starting its own service while it installs (we start what we need
# ourselves). A policy-rc.d that already exists is left as it is.
apt_install() {
  local pkg=$1
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "ensure-deps: $pkg is missing; install it as root:  apt-get update && apt-get install -y --no-install-recommends $pkg" >&2
    exit 1
  fi
  echo "ensure-deps: installing $pkg (apt-get install $pkg)" >&2
  local policy=/usr/sbin/policy-rc.d
  local made_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    made_policy=1
  fi
  local rc=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg"
  } >/dev/null || rc=$?
  if [[ $made_policy -eq 1 ]]; then
    rm -f "$policy"
  fi
  if [[ $rc -ne 0 ]]; then
    echo "ensure-deps: apt-get failed (exit $rc); rerun it by hand to see why:" >&2
    echo "ensure-deps:   apt-get update && apt-get install -y --no-install-recommends $pkg" >&2
    exit "$rc"
  fi
}

# npm_ci installs a package's node_modules when package-lock.json is newer
# than the last install (npm ci writes node_modules/.package-lock.json).
npm_ci() {
  local dir=$1
  if [[ ! -f $dir/node_modules/.package-lock.json || $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
    if ! command -v npm >/dev/null; then
      echo "ensure-deps: npm is missing; install Node.js 20 or later" >&2
      exit 1
    fi
    echo "ensure-deps: installing the npm packages of $dir (npm ci)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

if [[ $for_what == web ]]; then
  npm_ci clients/ts
  npm_ci clients/web
  exit 0
fi
if [[ $for_what == sdk ]]; then
  npm_ci clients/ts
  exit 0
fi
if [[ $for_what == openapi ]]; then
  npm_ci tools/redocly
  exit 0
fi

# The PostgreSQL server binaries: only they are used, never the package's
# own cluster.
if ! have_postgres; then
  apt_install postgresql
  if ! have_postgres; then
    echo "ensure-deps: postgresql is installed but no /usr/lib/postgresql/*/bin/initdb was found" >&2
    exit 1
  fi
fi

if ! command -v redis-server >/dev/null; then
  apt_install redis-server
fi

# mailpit, the SMTP server with a web inbox that `seatghor dev` and the
# notification tests send e-mail to (internal/devenv/mailpitbin.Version;
# MIT, run as a process; decision 0433), built once with go install.
mailpit_version=v1.33.1
mailpit_dir="${SEATGHOR_MAILPIT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/seatghor/mailpit-$mailpit_version}"
if [[ -z ${SEATGHOR_MAILPIT_BIN:-} && ! -x $mailpit_dir/mailpit ]]; then
  echo "ensure-deps: building mailpit (go install github.com/axllent/mailpit@$mailpit_version; a minute, once)" >&2
  mkdir -p "$mailpit_dir"
  (cd "$mailpit_dir" && GOBIN="$mailpit_dir" GOFLAGS=-mod=mod GOWORK=off go install "github.com/axllent/mailpit@$mailpit_version")
fi

# Everything below is for the tests and code generation only.
if [[ $for_what == run ]]; then
  exit 0
fi

npm_ci clients/ts
npm_ci clients/web
npm_ci tools/redocly

# pdftoppm renders the e-tickets to images in their tests (decision 0171).
if ! command -v pdftoppm >/dev/null; then
  apt_install poppler-utils
fi

if [[ ! -x /usr/bin/chromium ]]; then
  apt_install chromium
fi

# redis-cli makes the Redis Cluster of the cluster tests (decision 0200).
if ! command -v redis-cli >/dev/null; then
  apt_install redis-tools
fi

# The MinIO server for the object-store tests (internal/devenv/miniobin.Version).
minio_version=v0.0.0-20260212201848-7aac2a2c5b7c
minio_dir="${SEATGHOR_MINIO_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/seatghor/minio-$minio_version}"
if [[ -z ${SEATGHOR_TEST_MINIO_BIN:-} && ! -x $minio_dir/minio ]]; then
  echo "ensure-deps: building the MinIO server for the tests (go install github.com/minio/minio@$minio_version; a few minutes, once)" >&2
  mkdir -p "$minio_dir"
  (cd "$minio_dir" && GOBIN="$minio_dir" GOFLAGS=-mod=mod GOWORK=off go install "github.com/minio/minio@$minio_version")
fi

# The Meilisearch server the trip-index contract tests run against
# (projections/tripindex; docs/decisions/0051): a pinned, integrity-checked
# npm repackage of the 1.21.0 binary. `make test` runs those tests with
# SEATGHOR_TEST_MEILI=require, so a failure here stops it.
if ! bash scripts/install-meilisearch.sh >/dev/null; then
  echo "ensure-deps: could not install Meilisearch (scripts/install-meilisearch.sh); the trip-index tests need it" >&2
  exit 1
fi
