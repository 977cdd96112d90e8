#!/usr/bin/env bash
# The repository guards itself (run by `make test`, docs/DESIGN.md style 14):
#
#   1. no tracked file over 1 MB, and no binary file outside the allow-list
#      in .binaries-allowed (one path a line; # comments);
#   2. every rule cited anywhere (R-x or R-x.y, outside gen/) is a row of
#      docs/requirements.md, and every test that page names exists;
#   3. every reference to DESIGN.md resolves: docs/DESIGN.md exists and each
#      section it is cited for ("DESIGN.md, \"Section\"") is a heading there;
#   4. the import layers (scripts/layers): only server/api speaks Connect
#      (decision 0316), only the packages decision 0317 names serve HTTP,
#      and nothing under clients/ imports server/ or internal/ (0330).
#   5. every table has one owner (docs/DESIGN.md style 13): SQL outside the
#      owner names a table only where docs/table-owners.txt lists the
#      exception and its reason (scripts/tableowners, decision 0313).
#
# Committed migrations are guarded by a Go test (server/migrations,
# TestCommittedMigrationsAreNeverEdited). Prints what is wrong and exits 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
problem() {
  echo "check-repo: $*" >&2
  fail=1
}

# 1. Size and binaries. git's own test for "binary" (a NUL byte in the
# first 8 KB) decides: `git grep -I` lists the text files.
limit=$((1024 * 1024))
while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue
  size=$(stat -c %s "$f")
  if ((size > limit)); then
    problem "$f is $size bytes; nothing over 1 MB is tracked (build outputs and binaries stay out of git)"
  fi
done < <(git ls-files -z)
allowed=()
if [[ -f .binaries-allowed ]]; then
  mapfile -t allowed < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' .binaries-allowed | grep -v '^$' || true)
fi
while IFS= read -r f; do
  [[ -f $f ]] || continue
  ok=0
  for a in "${allowed[@]+"${allowed[@]}"}"; do
    [[ $f == "$a" ]] && ok=1
  done
  ((ok)) || problem "$f is a binary file and not in .binaries-allowed"
done < <(comm -23 <(git ls-files | sort) <(git grep -I --name-only -e '' | sort))

# 2. Every cited rule is in docs/requirements.md.
req=docs/requirements.md
if [[ ! -f $req ]]; then
  problem "$req is missing"
else
  while IFS= read -r r; do
    grep -q "^| $r |" "$req" || problem "$r is cited but has no row in $req"
  done < <(git grep -IohE '\bR-[0-9]+(\.[0-9]+)?\b' -- . ':!gen' ':!clients/ts/src/gen' ":!$req" | sort -u)
  while IFS= read -r t; do
    git grep -q "^func $t(" -- '*_test.go' || problem "$req names $t, which is no test"
  done < <(grep -oE '`(Test|Fuzz)[A-Za-z0-9_]+`' "$req" | tr -d '`' | sort -u)
fi

# 3. DESIGN.md references. A citation may wrap over comment lines, so the
# file is read whole with comment markers between lines removed.
design=docs/DESIGN.md
if git grep -q 'DESIGN\.md' -- . ':!docs/DESIGN.md'; then
  [[ -f $design ]] || problem "DESIGN.md is cited but $design is missing"
fi
if [[ -f $design ]]; then
  while IFS=$'\t' read -r file section; do
    grep -qE "^#+ $section\$" "$design" || problem "$file cites DESIGN.md section \"$section\", which is not a heading of $design"
  done < <(git grep -l 'DESIGN\.md' -- . ':!docs/DESIGN.md' | while IFS= read -r f; do
    perl -0777 -ne '
      s/\n[ \t]*(?:\/\/|--|#|\*)?[ \t]*/ /g;
      while (/DESIGN\.md,? "([^"]+)"/g) { print "$ARGV\t$1\n" }
    ' "$f"
  done)
fi

# 4. Import layers: a Go program reads the tracked Go files (scripts/layers,
# tested by scripts/layers/main_test.go).
git ls-files -z -- '*.go' | "${GO:-go}" run ./scripts/layers || fail=1

# 5. Table owners. Untracked files count too, so a new file is checked
# before it is committed; the command prints its own problems.
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
"${GO:-go}" build -o "$bindir/tableowners" ./scripts/tableowners
git ls-files -z --cached --others --exclude-standard -- '*.go' '*.sql' | "$bindir/tableowners" || fail=1

if ((fail)); then
  exit 1
fi
echo 'check-repo: sizes, binaries, cited rules, DESIGN.md references, import layers and table owners are in order'
