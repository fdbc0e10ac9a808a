"""The shell guard every host shares: which parts of a command print which file
(:mod:`ctxrelay.hooks.guard.prints`, over the plain-word reader and the tree-sitter
parser) and an agent's re-read record (:mod:`ctxrelay.hooks.guard.reads`). Each host
keeps its own bounds and its own advice. The rules, with examples, are in
``docs/guard.md``.
"""
