#!/usr/bin/env bash
# Check that the Python the Makefile uses can build ctxrelay's virtual environment.
# Debian's python3 ships venv's ensurepip separately (python3-venv): install it when this
# user may, otherwise say what to install in one sentence.
set -euo pipefail
py="${1:-python3}"

if ! command -v "$py" >/dev/null 2>&1; then
  echo "ensure-python: '$py' was not found; install Python 3.11 or newer, or run make PYTHON=/path/to/python3" >&2
  exit 1
fi
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "ensure-python: ctxrelay needs Python 3.11 or newer, '$py' is $("$py" -c 'import platform; print(platform.python_version())')" >&2
  exit 1
fi
if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-python: installing the venv module from the system's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    version=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    apt-get install -y -qq "python${version}-venv" >/dev/null || apt-get install -y -qq python3-venv >/dev/null
  else
    echo "ensure-python: '$py' cannot create virtual environments; install your system's python3-venv package" >&2
    exit 1
  fi
fi
