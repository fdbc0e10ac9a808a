"""``ctxrelay codex install``: ctxrelay's hooks into Codex's ``hooks.json``, trusted
through Codex's app-server (what is written and how: :mod:`ctxrelay.codex.setup.install`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import add_hook_command, handle_errors, print_install, print_json
from ctxrelay.cli.codex._options import scope_of, scope_parser
from ctxrelay.codex.setup.binary import cli_path
from ctxrelay.codex.setup.install import InstallResult, choose_command, codex_home, install_hooks

__all__ = ["main", "print_result"]

_DESCRIPTION = """\
Add ctxrelay's hooks (the guard on Codex's shell tool) to Codex's hooks.json, and trust
them the way Codex's own /hooks screen does: through 'codex app-server', handing back the
hash Codex reports for each hook. No bypass flag, and no hash computed by ctxrelay.

examples:
  ctxrelay codex install                          # this project: .codex/hooks.json
  ctxrelay codex install --project-dir ../app     # another project
  ctxrelay codex install --user                   # every project: $CODEX_HOME/hooks.json

The hooks run this environment's ctxrelay by absolute path (python -I -m
ctxrelay.codex.hook); install runs each on real payloads first (one only the guard's
shell parser can judge: the guard extra must be installed here) and changes nothing
when one does not work (--command overrides it). Our
groups are appended, so your own hooks and their trust stay as they are (an earlier
install's are replaced, never doubled); the file as it was is kept beside it (one
backup, and ctxrelay-install.json) for uninstall; trust records that name no hook
since your groups moved go, and a moved hook of yours keeps its trust. Where the layer's
config.toml already has hooks in [hooks] and hooks.json none, install refuses (Codex
would warn on every run about the two forms). Codex loads a project's
.codex/ only in a project you trust in Codex: ctxrelay never trusts a project for you.
Exit 1 when the hooks are written but Codex does not trust them yet, with the one
sentence that says what to trust and where."""


def print_result(result: InstallResult, verb: str, as_json: bool) -> None:
    """What install or uninstall changed, in sentences (or one JSON object)."""
    if as_json:
        print_json(result.as_json())
        return
    trust = result.trust
    lines = []
    if trust is not None:
        ok = f"Codex trusts all {len(trust.hooks)} of ctxrelay's hooks"
        lines.append(ok if trust.ok else f"not trusted: {trust.problem}")
    print_install(
        result.hooks,
        verb,
        changed=result.changed,
        command=result.command,
        lines=lines,
        notes=result.notes,
    )


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = scope_parser("install", _DESCRIPTION)
    add_hook_command(parser)
    opts = parser.parse_args(list(argv))
    scope, project = scope_of(opts)
    command = choose_command(opts.command)
    result = install_hooks(scope, project, codex_home(), command, cli_path())
    print_result(result, "installed into", opts.json)
    return 0 if result.trust is not None and result.trust.ok else 1
