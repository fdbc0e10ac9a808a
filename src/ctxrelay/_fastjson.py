"""``json.loads`` / ``json.dumps`` for the hook processes, without ``json``'s import cost.

``import json`` imports ``re`` (and with it ``enum``, ``functools``, ``collections``) and
compiles regular expressions for its pure-Python fallback and its whitespace rule. In a
``ctxrelay-hook`` process that costs more than everything else the hook does (about 0.8x
a bare interpreter start, see ``bench/hooks.py``), yet the decoding and encoding proper
are done by CPython's C accelerator ``_json`` whenever it exists. This module calls that
accelerator directly, configured exactly as ``json.loads`` and ``json.dumps`` configure
it with their default arguments: the same code does the work, so the results are the
same, and nothing of ``json`` is copied.

Whatever the fast path does not handle goes to ``json`` itself, imported only then: a
malformed document (so the error is ``json.JSONDecodeError`` with ``json``'s message),
bytes that are not plain UTF-8, a value ``json`` cannot serialize, and every call on an
interpreter without ``_json``. ``tests/test_fastjson.py`` holds both to the same output.
"""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"  # JSON's whitespace (RFC 8259), what ``json`` skips around a value
_DEFAULT = (", ", ": ")  # ``json.dumps``'s default separators


class _Unsupported(Exception):
    """Raised from inside the C encoder for a value only ``json`` can judge."""


class _DecoderSettings:
    """What ``_json.make_scanner`` reads from its context: the settings of a default
    ``json.JSONDecoder`` (``strict``, no hooks, ``float``/``int``, and the three
    non-standard constants ``json.loads`` accepts)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self) -> None:
        inf = float("inf")
        constants = {"-Infinity": -inf, "Infinity": inf, "NaN": float("nan")}
        self.parse_constant = constants.__getitem__


def _refuse(value: object) -> object:
    raise _Unsupported


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_encoders: tuple[Callable[[str], str], Callable[[str], str]] | None = None
try:
    import _json

    _scan = _json.make_scanner(_DecoderSettings())  # type: ignore[arg-type]
    _encoders = (_json.encode_basestring_ascii, _json.encode_basestring)
except Exception:  # no accelerator, or one that wants other settings: ``json`` does it all
    _scan = None
    _encoders = None


def loads(document: str | bytes | bytearray) -> Any:
    """``json.loads(document)``: the same value, or the same error."""
    if _scan is not None:
        if isinstance(document, str):
            text: str | None = document
        elif document[:3] == b"\xef\xbb\xbf" or b"\x00" in document[:4]:
            text = None  # a BOM or UTF-16/32: ``json`` detects the encoding
        else:
            try:
                text = bytes(document).decode("utf-8", "surrogatepass")  # as json.loads
            except UnicodeDecodeError:
                text = None
        if text is not None and not text.startswith("\ufeff"):
            start = len(text) - len(text.lstrip(_WHITESPACE))
            try:
                value, end = _scan(text, start)
            except (StopIteration, SystemError):
                # No value here, or a malformed one: ``json`` says so below. (CPython
                # 3.11's scanner raises its error through ``json.decoder``, which it looks
                # up in ``sys.modules`` only: before ``json`` is imported a malformed
                # document gives a SystemError, "returned NULL without setting an
                # exception", instead of json's JSONDecodeError.)
                value, end = None, -1
            else:
                if end == len(text) or not text[end:].strip(_WHITESPACE):
                    return value
    import json  # only for what the fast path left: it raises json's own error

    return json.loads(document)


def dumps(
    value: object, *, ensure_ascii: bool = True, separators: tuple[str, str] = _DEFAULT
) -> str:
    """``json.dumps(value, ensure_ascii=..., separators=...)``, all else default."""
    if _encoders is not None:
        item_separator, key_separator = separators
        encoder = _json.make_encoder(
            {},  # check_circular: a fresh markers dict per call, as json does
            _refuse,
            _encoders[0] if ensure_ascii else _encoders[1],
            None,  # indent
            key_separator,
            item_separator,
            False,  # sort_keys
            False,  # skipkeys
            True,  # allow_nan
        )
        try:
            if isinstance(value, str):  # json encodes a bare string without the encoder
                return _encoders[0](value) if ensure_ascii else _encoders[1](value)
            return "".join(encoder(value, 0))
        except _Unsupported:
            pass  # json raises its own TypeError (or calls nothing: same as here)
    import json

    return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators)
