#!/usr/bin/env bash
# Install the pinned Gemini CLI (scripts/gemini/package.json) into DIR (.venv/gemini) with
# npm, as ensure-codex.sh installs Codex: quiet, from npm's own cache when it has the
# package. Without npm it installs nothing and says so; the Gemini tests then skip with a
# visible reason (CI sets CTXRELAY_REQUIRE_GEMINI=1 to make them fail). A failed install
# is an error that names npm's log, never a silent skip.
set -euo pipefail
dir=$1
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  echo "ensure-gemini: npm is not installed: the Gemini CLI is not installed and its tests will skip" >&2
  exit 0
fi
mkdir -p "$dir"
cp "$here/gemini/package.json" "$dir/package.json"
log="$dir/npm-install.log"
if ! npm install --prefix "$dir" --prefer-offline --no-audit --no-fund --no-package-lock \
    --loglevel=error >"$log" 2>&1; then
  echo "ensure-gemini: ERROR: npm could not install the Gemini CLI ($(grep -o '"@google/gemini-cli": "[^"]*"' "$here/gemini/package.json")); npm's output:" >&2
  sed 's/^/  /' "$log" >&2
  exit 1
fi
version="$("$dir/node_modules/.bin/gemini" --version 2>&1)" || {
  echo "ensure-gemini: ERROR: the Gemini CLI was installed but does not run: $version" >&2
  exit 1
}
touch "$dir/.installed"
echo "ensure-gemini: Gemini CLI $version in $dir"
