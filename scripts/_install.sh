# Shared by the scripts/ensure-*.sh (sourced, not run): the two ways they install what
# the tests need.

# apt_install_missing CALLER COMMAND PACKAGE WHY: install the system's PACKAGE when
# COMMAND is missing and this user may (root with apt-get); else say what will not work.
apt_install_missing() {
  local caller=$1 command=$2 package=$3 why=$4
  command -v "$command" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "$caller: installing $package from the system's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "$package" >/dev/null
  else
    echo "$caller: $command is not installed and this user cannot install it; $why" >&2
  fi
}

# npm_install_pinned CALLER WHAT PACKAGE_JSON DIR: install PACKAGE_JSON's pinned
# dependencies into DIR with npm (quiet, from npm's cache when it has them). Returns 2
# without npm (having said so), and fails with npm's output when the install fails.
npm_install_pinned() {
  local caller=$1 what=$2 package_json=$3 dir=$4
  if ! command -v npm >/dev/null 2>&1; then
    echo "$caller: npm is not installed: $what is not installed and its tests will skip" >&2
    return 2
  fi
  mkdir -p "$dir"
  cp "$package_json" "$dir/package.json"
  local log="$dir/npm-install.log"
  if ! npm install --prefix "$dir" --prefer-offline --no-audit --no-fund --no-package-lock \
      --loglevel=error >"$log" 2>&1; then
    echo "$caller: ERROR: npm could not install $what (pinned in $package_json); npm's output:" >&2
    sed 's/^/  /' "$log" >&2
    return 1
  fi
}
