#!/usr/bin/env bash
# Install the pinned OpenCode CLI (scripts/opencode/package.json) into DIR (.venv/opencode)
# with npm, as ensure-codex.sh installs the Codex CLI, and ripgrep where the system lacks
# it: OpenCode's grep and glob tools run `rg` and, without it, download it at run time,
# which fails offline. Without npm it installs nothing and says so; the OpenCode tests then
# skip with a visible reason (CI sets CTXRELAY_REQUIRE_OPENCODE=1 to make them fail).
set -euo pipefail
dir=$1
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v rg >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-opencode: installing ripgrep from the system's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq ripgrep >/dev/null
  else
    echo "ensure-opencode: rg is not installed and this user cannot install it; OpenCode's grep and glob tools will fail offline" >&2
  fi
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "ensure-opencode: npm is not installed: the OpenCode CLI is not installed and its tests will skip" >&2
  exit 0
fi
mkdir -p "$dir"
cp "$here/opencode/package.json" "$dir/package.json"
log="$dir/npm-install.log"
if ! npm install --prefix "$dir" --prefer-offline --no-audit --no-fund --no-package-lock \
    --loglevel=error >"$log" 2>&1; then
  echo "ensure-opencode: ERROR: npm could not install the OpenCode CLI ($(grep -o '"opencode-ai": "[^"]*"' "$here/opencode/package.json")); npm's output:" >&2
  sed 's/^/  /' "$log" >&2
  exit 1
fi
# npm may skip opencode-ai's postinstall; its bin is already the platform binary (a hard
# link), so the CLI runs either way, and this checks that it does.
version="$("$dir/node_modules/.bin/opencode" --version 2>&1)" || {
  echo "ensure-opencode: ERROR: the OpenCode CLI was installed but does not run: $version" >&2
  exit 1
}
touch "$dir/.installed"
echo "ensure-opencode: OpenCode $version in $dir"
