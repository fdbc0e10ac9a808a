"""The install machinery every host shares, written once: what ``ctxrelay <host>
install | uninstall | doctor`` do to a host's files and commands, whatever the host.

- :mod:`~ctxrelay.hooks.install.merge`: merging a snippet into a JSON settings file and
  taking exactly that out again, key by key, by data-driven rules;
- :mod:`~ctxrelay.hooks.install.files`: reading a settings file (refusing one it cannot
  parse), writing it atomically, its backup, and putting its own bytes back;
- :mod:`~ctxrelay.hooks.install.manifest`: the one record of what install did
  (``ctxrelay-install.json``) and the rules that leave a project as install found it: a
  file install created goes, a file back to its content gets its own bytes, at most one
  backup of a file remains, a copied file goes only while unchanged;
- :mod:`~ctxrelay.hooks.install.entries`: the hooks object of a settings file
  (``{event: [{matcher, hooks: [{type, command, timeout}]}]}``, the format Claude Code,
  Codex and the Gemini CLI share): ours built, ours found, ours told from the user's;
- :mod:`~ctxrelay.hooks.install.launch`: the commands install writes (this
  environment's interpreter and console scripts, by absolute path) and how an installed
  command is known as ctxrelay's, this layout's and an older one's;
- :mod:`~ctxrelay.hooks.install.probe`: running a command as a host runs it, with a
  payload, and proving the guard works (the probes install and doctor share).

A host keeps only what is its own: its settings target and snippet, its events and
payload samples, its trust or registration steps. Install time only: nothing here is
imported on a hook's path (``tests/claude/test_hook_imports.py``).
"""
