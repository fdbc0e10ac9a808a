#!/usr/bin/env bash
# Install the pinned OpenCode CLI (scripts/opencode/package.json) into DIR (.venv/opencode)
# with npm, as ensure-codex.sh installs the Codex CLI, and ripgrep where the system lacks
# it: OpenCode's grep and glob tools run `rg` and, without it, download it at run time,
# which fails offline. Without npm it installs nothing and says so; the OpenCode tests then
# skip with a visible reason (CI sets CTXRELAY_REQUIRE_OPENCODE=1 to make them fail).
set -euo pipefail
dir=$1
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/_install.sh"
apt_install_missing ensure-opencode rg ripgrep "OpenCode's grep and glob tools will fail offline"
status=0
npm_install_pinned ensure-opencode "the OpenCode CLI" "$here/opencode/package.json" "$dir" || status=$?
[ "$status" = 2 ] && exit 0
[ "$status" = 0 ] || exit "$status"
# npm may skip opencode-ai's postinstall; its bin is already the platform binary (a hard
# link), so the CLI runs either way, and this checks that it does.
version="$("$dir/node_modules/.bin/opencode" --version 2>&1)" || {
  echo "ensure-opencode: ERROR: the OpenCode CLI was installed but does not run: $version" >&2
  exit 1
}
touch "$dir/.installed"
echo "ensure-opencode: OpenCode $version in $dir"
