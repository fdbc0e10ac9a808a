#!/bin/sh
# The plugin's hooks run through this launcher (hooks.json: sh run-hook.sh EVENT).
# It finds ctxrelay-hook on the PATH Claude Code sees, else where pipx and uv install
# tools, and runs it with the hook payload on stdin. Without one, the SessionStart hook
# tells the user in one line how to install it and every other event does nothing: the
# session is never broken. Its path is ctxrelay.claude.setup._snippet.PLUGIN_LAUNCHER; POSIX sh.

event="${1:-}"
data="${XDG_DATA_HOME:-$HOME/.local/share}"

find_hook() {
    if command -v ctxrelay-hook >/dev/null 2>&1; then
        command -v ctxrelay-hook
        return 0
    fi
    for candidate in \
        "${PIPX_BIN_DIR:-$HOME/.local/bin}/ctxrelay-hook" \
        "${PIPX_HOME:-$data/pipx}/venvs/ctxrelay/bin/ctxrelay-hook" \
        "$HOME/.local/pipx/venvs/ctxrelay/bin/ctxrelay-hook" \
        "${UV_TOOL_BIN_DIR:-${XDG_BIN_HOME:-$HOME/.local/bin}}/ctxrelay-hook" \
        "${UV_TOOL_DIR:-$data/uv/tools}/ctxrelay/bin/ctxrelay-hook"; do
        if [ -x "$candidate" ]; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    return 1
}

if hook="$(find_hook)"; then
    exec "$hook"
fi

cat >/dev/null
if [ "$event" = "SessionStart" ]; then
    # A clone to install from: the marketplace's copy of the repository, if it is one.
    source="$HOME/.claude/plugins/marketplaces/ctxrelay"
    case "$source" in
    *[\"\\\']*) source="" ;;
    esac
    if [ -n "$source" ] && [ -f "$source/pyproject.toml" ]; then
        how="pipx install '$source[claude]' (or: uv tool install '$source[claude]')"
    else
        how="pipx install '.[claude]' in a clone of the ctxrelay repository"
    fi
    printf '{"systemMessage": "ctxrelay: no ctxrelay-hook command found (PATH, pipx, uv), so the plugin does nothing; install it with %s, then restart Claude Code."}\n' "$how"
fi
exit 0
