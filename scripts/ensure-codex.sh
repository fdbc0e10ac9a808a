#!/usr/bin/env bash
# Install the pinned Codex CLI and ccusage (scripts/codex/package.json) into DIR
# (.venv/codex) with npm: quiet, from npm's own cache when it has the packages. Without npm it installs
# nothing and says so; the Codex tests then skip with a visible reason (CI sets
# CTXRELAY_REQUIRE_CODEX=1 to make them fail). A failed install is an error that names
# npm's log, never a silent skip.
set -euo pipefail
dir=$1
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/_install.sh"
status=0
npm_install_pinned ensure-codex "the Codex CLI" "$here/codex/package.json" "$dir" || status=$?
[ "$status" = 2 ] && exit 0
[ "$status" = 0 ] || exit "$status"
log="$dir/npm-install.log"
version="$("$dir/node_modules/.bin/codex" --version 2>&1)" || {
  echo "ensure-codex: ERROR: the Codex CLI was installed but does not run: $version" >&2
  exit 1
}
# npm leaves ccusage's platform binary without its execute bit (its wrapper sets it); the
# tests run the binary itself, as bench/analyze.py does.
ccusage="$(ls "$dir"/node_modules/@ccusage/ccusage-*/bin/ccusage 2>/dev/null | head -1)"
if [ -z "$ccusage" ]; then
  echo "ensure-codex: ERROR: npm installed no ccusage binary for this platform; npm's output:" >&2
  sed 's/^/  /' "$log" >&2
  exit 1
fi
chmod +x "$ccusage"
touch "$dir/.installed"
echo "ensure-codex: $version and $("$ccusage" --version 2>&1) in $dir"
