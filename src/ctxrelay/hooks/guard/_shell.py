"""Find the commands of a Bash script whose file output would reach the context.

The script is parsed by tree-sitter-bash (bashlex fails on quoted heredocs) and walked
statement by statement, carrying two facts down the tree: whether stdout and stderr still
reach the context (Claude Code's Bash tool returns both), and the shell's directory
(``cd`` in a sequence moves it; subshells and pipeline parts keep their own), and the
words a ``for`` loop variable takes. A pipe, a redirect of stdout, a command or process
substitution takes the output away; a substitution's text is never walked at all. A
script with a syntax error is not judged.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from ctxrelay.errors import MissingExtraError
from ctxrelay.hooks.guard._commands import PRINTERS, UNKNOWN_OPTION, plan
from ctxrelay.hooks.guard._model import FilePrint, Operand
from ctxrelay.hooks.guard._plain import PATH_MAX
from ctxrelay.hooks.guard._plain import resolve as _resolve

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node, Parser

__all__ = ["scan"]


@functools.cache
def _get_parser() -> Parser:
    """The Bash parser, created on first use (only a command that needs parsing loads
    tree-sitter)."""
    try:
        import tree_sitter  # noqa: PLC0415 — the guard extra's parser, only for shell syntax
        import tree_sitter_bash  # noqa: PLC0415 — the guard extra's parser
    except ImportError as exc:
        raise MissingExtraError("the Bash guard", "guard") from exc
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


# Statements whose children run in sequence, in the same shell and with the same output.
_SEQUENCES = frozenset(
    {
        "program",
        "list",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "function_definition",  # its body prints when the function is called
        "negated_command",
    }
)
VISIT_MAX = 20_000
"""Statements walked in one command at most: a machine-made script of a hundred thousand
statements is judged by its first ones, so the hook answers well within its timeout."""

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})

_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
"""Shells whose ``-c SCRIPT`` is judged as a command of its own."""

INLINE_DEPTH = 3
"""``bash -c`` shells followed inside each other at most."""

# Programs that run the rest of their arguments as a command, with the options of each
# that take a separate value (whose value must be skipped too).
_WRAPPERS: dict[str, frozenset[str]] = {
    "builtin": frozenset(),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
}

# Compiled on first use (``re`` caches them); most commands need none of them.
_UNESCAPE = r"\\(.)"
_DQ_UNESCAPE = r"\\([\\\"$`\n])"
_ESCAPED_GLOB = r"(?<!\\)[*?[]"
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*="


class _Word:
    """A shell word: its value when the shell would not expand it at run time."""

    __slots__ = ("glob", "pipe", "raw", "value")

    def __init__(self, raw: str, value: str | None, glob: bool, pipe: bool) -> None:
        self.raw = raw
        self.value = value
        self.glob = glob
        self.pipe = pipe  # a process substitution


def _text(src: bytes, node: Node) -> str:
    """The text of ``node`` in the command as written (not the parser's stand-in copy)."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


def _literal(src: bytes, node: Node) -> tuple[str | None, bool]:
    """(value, is an unquoted glob) of a word node; value ``None`` when it expands."""
    kind = node.type
    if kind == "word":
        raw = _text(src, node)
        glob = "*" in raw or "?" in raw or "[" in raw
        if "\\" not in raw:
            return raw, glob
        glob = glob and re.search(_ESCAPED_GLOB, raw) is not None
        return re.sub(_UNESCAPE, r"\1", raw, flags=re.DOTALL), glob
    if kind == "number":
        return _text(src, node), False
    if kind == "raw_string":
        return _text(src, node)[1:-1], False
    if kind == "string":
        parts: list[str] = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(re.sub(_DQ_UNESCAPE, r"\1", _text(src, child)))
            else:
                value, _ = _literal(src, child)
                if value is None:
                    return None, False
                parts.append(value)
        return "".join(parts), False
    if kind == "concatenation":
        values: list[str] = []
        glob = False
        for child in node.named_children:
            if child.type == "word" and _text(src, child) in ("{", "}"):
                return None, False  # brace expansion: a{1,2}
            value, child_glob = _literal(src, child)
            if value is None:
                return None, False
            values.append(value)
            glob = glob or child_glob
        return "".join(values), glob
    if kind in ("simple_expansion", "expansion") and _text(src, node) in ("$HOME", "${HOME}"):
        return os.path.expanduser("~"), False
    return None, False


def _word(src: bytes, node: Node) -> _Word:
    raw = _text(src, node)
    value, glob = _literal(src, node)
    if value is None and node.type != "process_substitution" and raw.startswith("-"):
        value = UNKNOWN_OPTION  # "-$n", "-${1:-10}": an option whose value is unknown
    return _Word(raw, value, glob, node.type == "process_substitution")


class _Redirected:
    """The outcome of a command's redirects, applied in order."""

    __slots__ = ("err", "extra", "followers", "out", "stdin")

    def __init__(self, out: bool, err: bool) -> None:
        self.out = out
        self.err = err
        self.stdin: Node | None = None  # the file fed by "<", if the last stdin redirect
        self.extra: list[Node] = []  # words tree-sitter puts after a redirect's target
        self.followers: list[Node] = []  # statements a heredoc's line goes on with


def _number(text: str) -> int | None:
    """A file descriptor number: ASCII digits only ("²" is a digit to Python, not to bash)."""
    return int(text) if text.isascii() and text.isdigit() else None


def _fd(state: _Redirected, fd: int) -> bool:
    return state.out if fd == 1 else state.err if fd == 2 else False


def _set(state: _Redirected, fd: int, reaches: bool) -> None:
    if fd == 1:
        state.out = reaches
    elif fd == 2:
        state.err = reaches


def _apply(src: bytes, state: _Redirected, redirect: Node, fd_hint: int | None = None) -> None:
    kind = redirect.type
    if kind == "herestring_redirect":
        state.stdin = None
        return
    if kind == "heredoc_redirect":
        state.stdin = None
        for child in redirect.named_children:
            if child.type == "file_redirect":
                _apply(src, state, child)
            elif child.type == "pipeline":
                # "cat <<EOF | grep x": the rest of the line is this command's pipe.
                first = child.children[0].type if child.child_count else "|"
                state.out = False
                if first == "|&":
                    state.err = False
                state.followers.append(child)
            elif child.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                state.followers.append(child)  # "cat <<EOF && next": the next statement
        return
    fd: int | None = fd_hint
    op = ""
    targets: list[Node] = []
    for child in redirect.children:
        if child.type == "file_descriptor":
            fd = _number(_text(src, child))
        elif not child.is_named:
            op = child.type
        else:
            targets.append(child)
    state.extra.extend(targets[1:])
    target = targets[0] if targets else None
    if op in (">", ">>", ">|"):
        _set(state, 1 if fd is None else fd, False)
    elif op in ("&>", "&>>"):
        state.out = state.err = False
    elif op in (">&", "<&"):
        dest = "" if target is None else _text(src, target)
        source = _number(dest)
        if source is not None:
            _set(state, (1 if op == ">&" else 0) if fd is None else fd, _fd(state, source))
        elif dest == "-":
            _set(state, (1 if op == ">&" else 0) if fd is None else fd, False)
        elif op == ">&" and fd is None:
            state.out = state.err = False  # ">&file" is "&>file"
        elif fd is not None:
            _set(state, fd, False)
    elif op in (">&-", "<&-"):
        _set(state, (1 if op == ">&-" else 0) if fd is None else fd, False)
    elif op in ("<", "<>"):
        if fd is None or fd == 0:
            state.stdin = target
        else:
            _set(state, fd, False)


_Binds = dict[str, tuple[_Word, ...]]
"""Loop variables with the literal words they take (``for f in a b *.py``)."""

# A stack entry of the walk: a node, whether its stdout and its stderr reach the context,
# the shell's directory (a one-item list shared by statements run in the same shell),
# the redirects a redirected_statement hands to its command, and the loop variables.
_Entry = tuple["Node", bool, bool, list[str | None], list["Node"], _Binds]

_VARIABLE_WORD = r'"?\$(?:\{(\w+)\}|(\w+))"?\Z'


def _bind_loop(src: bytes, loop: Node, binds: _Binds) -> _Binds:
    """The loop variables inside the body of ``for VAR in WORDS``: VAR takes each word
    when all are literal (globs included); otherwise VAR is unknown inside."""
    name: str | None = None
    values: list[_Word] = []
    literal = True
    for child in loop.named_children:
        if child.type == "variable_name" and name is None:
            name = _text(src, child)
        elif child.type not in ("do_group", "comment"):
            word = _word(src, child)
            literal = literal and word.value is not None and not word.pipe
            values.append(word)
    if name is None:
        return binds
    inner = dict(binds)
    if literal and values:
        inner[name] = tuple(values)
    else:
        inner.pop(name, None)  # "for f; do" walks "$@": unknown
    return inner


def _substitute(words: list[_Word], binds: _Binds) -> list[_Word]:
    """Replace each whole-word ``$f``/``"${f}"`` of a loop variable by the loop's words."""
    if not binds:
        return words
    out: list[_Word] = []
    for word in words:
        m = re.match(_VARIABLE_WORD, word.raw) if word.value is None else None
        bound = binds.get(m.group(1) or m.group(2)) if m else None
        out.extend(bound if bound is not None else (word,))
    return out


class _Walker:
    def __init__(self, source: bytes, cwd: str | None, depth: int = 0) -> None:
        self.source = source
        self.cwd = cwd
        self.depth = depth
        self.found: list[FilePrint] = []

    def walk(self, root: Node) -> list[FilePrint]:
        # Depth-first, in source order, without recursion (scripts can nest deeply).
        stack: list[_Entry] = [(root, True, True, [self.cwd], [], {})]
        visits = 0
        while stack and visits < VISIT_MAX:
            visits += 1
            node, out, err, where, outer, binds = stack.pop()
            kind = node.type
            if kind == "command":
                followers = self._command(node, out, err, where, outer=outer, binds=binds)
                for follower in reversed(followers):
                    stack.append((follower, out, err, where, [], binds))
            elif kind == "for_statement":
                for child in reversed(node.named_children):
                    if child.type == "do_group":
                        inner = _bind_loop(self.source, node, binds)
                        stack.append((child, out, err, where, [], inner))
            elif kind in _SEQUENCES:
                stack.extend(
                    (child, out, err, where, [], binds)
                    for child in reversed(node.named_children)
                    if child.type not in _REDIRECTS
                )
            elif kind == "subshell":
                own = [where[0]]
                stack.extend(
                    (child, out, err, own, [], binds) for child in reversed(node.named_children)
                )
            elif kind == "pipeline":
                stack.extend(reversed(list(self._pipeline(node, out, err, where, binds))))
            elif kind == "redirected_statement":
                body: Node | None = None
                redirects: list[Node] = []
                for child in node.named_children:
                    if child.type in _REDIRECTS:
                        redirects.append(child)
                    elif body is None:
                        body = child
                if body is None:
                    continue
                if body.type == "command":
                    stack.append((body, out, err, where, redirects, binds))
                    continue
                state = _Redirected(out, err)
                for redirect in redirects:
                    _apply(self.source, state, redirect)
                for follower in reversed(state.followers):
                    stack.append((follower, out, err, where, [], binds))
                stack.append((body, state.out, state.err, where, [], binds))
            # Anything else (assignments, tests, declarations, comments) runs no
            # command whose output reaches the context: substitutions inside it are
            # captured, so they are never walked.
        return self.found

    def _pipeline(
        self, node: Node, out: bool, err: bool, where: list[str | None], binds: _Binds
    ) -> Iterator[_Entry]:
        parts = [c for c in node.children if c.is_named]
        ops = [c.type for c in node.children if not c.is_named]
        # A part's output reaches the context when every part after it passes its input
        # on whole ("cat f | tee copy"); any other reader takes it away.
        reaches = [out] * len(parts)
        for index in range(len(parts) - 2, -1, -1):
            reaches[index] = reaches[index + 1] and self._passes_on(parts[index + 1])
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            both = not last and index < len(ops) and ops[index] == "|&"
            # Each part of a pipeline runs in its own subshell.
            yield part, reaches[index], err and not both, [where[0]], [], binds

    def _passes_on(self, node: Node) -> bool:
        """Whether ``node`` is ``tee`` (whatever its files), which copies its input to
        its stdout, with no redirect of its own."""
        if node.type != "command":
            return False
        name = next((c for c in node.named_children if c.type == "command_name"), None)
        if name is None or not name.named_child_count:
            return False
        if any(c.type in _REDIRECTS for c in node.named_children):
            return False
        program, _ = _literal(self.source, name.named_children[0])
        return program is not None and os.path.basename(program) == "tee"

    def _command(
        self,
        node: Node,
        out: bool,
        err: bool,
        where: list[str | None],
        *,
        outer: list[Node],
        binds: _Binds,
    ) -> list[Node]:
        name: Node | None = None
        args: list[Node] = []
        redirects: list[Node] = []
        for child in node.named_children:
            kind = child.type
            if kind == "command_name":
                name = child
            elif kind in _REDIRECTS:
                redirects.append(child)
            elif kind != "variable_assignment":
                args.append(child)
        redirects.extend(outer)
        # tree-sitter-bash reads the "0" of "cat 0< f" as an argument: a number that
        # touches the redirect after it is that redirect's descriptor.
        hints = {a.end_byte: a for a in args if a.type == "number"}
        state = _Redirected(out, err)
        for redirect in redirects:
            hint = hints.get(redirect.start_byte)
            fd = None if hint is None else _number(_text(self.source, hint))
            if hint is not None and fd is not None and redirect.type == "file_redirect":
                args.remove(hint)
                _apply(self.source, state, redirect, fd)
            else:
                _apply(self.source, state, redirect)
        if name is None or not name.named_child_count:
            return state.followers
        program, _ = _literal(self.source, name.named_children[0])
        if program is None:
            return state.followers
        program = os.path.basename(program)
        if state.extra:
            args = sorted(args + state.extra, key=lambda n: n.start_byte)
        words = [_word(self.source, a) for a in args]
        program, words = _unwrap(program, words)
        if program in ("cd", "pushd", "popd"):
            where[0] = self._chdir(program, words, where[0])
        elif program in _SHELLS and state.out:
            self._inline(words, where[0])
        elif program in PRINTERS and state.out:
            words = _substitute(words, binds)
            self._printer(node, program, words, state=state, redirects=outer, cwd=where[0])
        return state.followers

    def _inline(self, words: list[_Word], cwd: str | None) -> None:
        """``bash -c 'SCRIPT'``: the script is judged as a command of its own, in the
        same directory (at most :data:`INLINE_DEPTH` shells deep)."""
        script = next(
            (words[i + 1].value for i, w in enumerate(words[:-1]) if w.value == "-c"), None
        )
        if script is None or self.depth >= INLINE_DEPTH:
            return
        found = scan(script, cwd, depth=self.depth + 1)
        self.found.extend(found or ())

    def _chdir(self, program: str, words: list[_Word], cwd: str | None) -> str | None:
        operands = [w for w in words if w.value is None or not w.value.startswith("-")]
        if program == "popd" or (operands and operands[0].value in (None, "-")):
            return None  # the directory is known only at run time
        if not operands:
            return os.path.expanduser("~") if program == "cd" else None
        value = operands[0].value
        return None if value is None else _resolve(value, cwd)

    def _printer(
        self,
        node: Node,
        program: str,
        words: list[_Word],
        *,
        state: _Redirected,
        redirects: list[Node],
        cwd: str | None,
    ) -> None:
        printed = plan(program, [w.value for w in words])
        if printed is None:
            return
        sources = [words[i] for i in printed.files]
        sources += [_Word(repr(p), p, False, False) for p in printed.paths]
        if not sources:
            if state.stdin is None:
                return  # reads a pipe, a heredoc or the terminal
            sources = [_word(self.source, state.stdin)]
        operands: list[Operand] = []
        for word in sources:
            if word.pipe:
                continue  # "<(sort x)" is a pipe, and what prints into it is allowed
            if len(word.raw) > PATH_MAX or "\x00" in word.raw:
                continue  # the kernel takes neither as a path: no file is printed
            if word.value is None:
                quoted = len(word.raw) > 1 and word.raw[0] == word.raw[-1] == '"'
                operands.append(Operand(word.raw[1:-1] if quoted else word.raw, literal=False))
                continue
            path = _resolve(word.value, cwd)
            if path is None:
                operands.append(Operand(word.value, literal=False))
            else:
                operands.append(Operand(path, glob=word.glob))
        if not operands:
            return
        # The command as the agent wrote it, with the redirects that follow it.
        end = max([node.end_byte, *(r.end_byte for r in redirects)])
        shown = self.source[node.start_byte : end].decode("utf-8", "surrogateescape")
        self.found.append(FilePrint(shown, program, tuple(operands), printed.ranges))


def _unwrap(program: str, words: list[_Word]) -> tuple[str, list[_Word]]:
    """``sudo cat f`` runs ``cat f``: see through the wrappers in ``_WRAPPERS``."""
    while program in _WRAPPERS:
        valued = _WRAPPERS[program]
        duration = program == "timeout"  # timeout's first operand is its duration
        i = 0
        while i < len(words):
            value = words[i].value
            if value is None:
                return "", []
            if program == "command" and value in ("-v", "-V"):
                return "", []  # a lookup, not a run
            if value.startswith("-") and value != "-":
                i += 2 if value in valued else 1
            elif program == "env" and re.match(_ASSIGNMENT, value):
                i += 1
            elif duration:
                duration = False
                i += 1
            else:
                break
        if i >= len(words) or words[i].value is None:
            return "", []
        program = os.path.basename(words[i].value or "")
        words = words[i + 1 :]
    return program, words


_ASTRAL = r"[\U00010000-\U0010ffff]"
ASTRAL_STAND_IN = "xxxx"
"""What the parser sees instead of a character beyond the Basic Multilingual Plane.

tree-sitter-bash 0.25.1 (under tree-sitter 0.26.1) reads out of bounds when "{" is
followed by such a character, and crashes the process for planes 14 to 16 (e.g.
"{" then U+E0041). Four ASCII letters take the same four UTF-8 bytes, so every node's
byte range is unchanged and its text is read from the command as written; to bash both
are ordinary word characters, so the parse is the same."""


def _for_parser(command: str) -> bytes:
    return re.sub(_ASTRAL, ASTRAL_STAND_IN, command).encode("utf-8", "surrogatepass")


def scan(command: str, cwd: str | None, *, depth: int = 0) -> tuple[FilePrint, ...] | None:
    """The file prints of ``command``, or ``None`` when it cannot be parsed.

    ``cwd`` is the shell's starting directory (absolute), used to make relative paths
    absolute; ``None`` leaves them as written. ``depth`` counts the ``bash -c`` shells
    this command runs in.
    """
    source = command.encode("utf-8", "surrogatepass")
    tree = _get_parser().parse(_for_parser(command) if not command.isascii() else source)
    root = tree.root_node
    if root.has_error:
        return None
    return tuple(_Walker(source, cwd, depth).walk(root))
