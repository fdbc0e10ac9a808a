#!/usr/bin/env bash
# Install what the test suite needs from the system's packages, where this user may.
# Without root (a user's laptop) it installs nothing; the tests that need a missing
# service then skip with a visible reason (CI sets CTXRELAY_REQUIRE_* to make them fail).
set -euo pipefail

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; }

if ! have_pg; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-services: installing PostgreSQL from the system's packages"
    export DEBIAN_FRONTEND=noninteractive
    # The tests start throwaway clusters of their own: no system cluster on port 5432.
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/ctxrelay.conf
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
  else
    echo "ensure-services: PostgreSQL is not installed and this user cannot install it; its tests will skip"
  fi
fi

# The Codex TUI end-to-end tests drive Codex in tmux, which answers the terminal's queries
# that a bare pseudo-terminal leaves unanswered.
. "$(cd "$(dirname "$0")" && pwd)/_install.sh"
apt_install_missing ensure-services tmux tmux "the Codex TUI tests will skip"
