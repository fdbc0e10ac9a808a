"""``ctxrelay._fastjson`` is ``json.loads`` / ``json.dumps``: the same value, the same text
and the same error for every input, with or without the ``_json`` accelerator."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay import _fastjson

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)
_separators = st.sampled_from([(", ", ": "), (",", ":")])


def _same(a: object, b: object) -> bool:
    """Equal, with NaN equal to itself (``json`` round-trips NaN as NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _outcome(load: Callable[[str | bytes], object], document: str | bytes) -> object:
    """The value, or the error's type and message (UnicodeDecodeError is a ValueError)."""
    try:
        return ["value", load(document)]
    except (ValueError, RecursionError) as exc:
        return ["error", type(exc).__name__, str(exc)]


def test_the_accelerator_is_in_use_here() -> None:
    # Otherwise every test below compares json with itself.
    assert _fastjson._scan is not None
    assert _fastjson._encoders is not None


@given(_values, st.booleans(), _separators)
@settings(max_examples=400, deadline=None)
def test_dumps_is_json_dumps(value: object, ascii_only: bool, separators: tuple[str, str]) -> None:
    expected = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    assert _fastjson.dumps(value, ensure_ascii=ascii_only, separators=separators) == expected


@given(_values, st.booleans(), st.sampled_from(["", " ", "\n", " \t\r\n "]))
@settings(max_examples=400, deadline=None)
def test_loads_is_json_loads(value: object, ascii_only: bool, pad: str) -> None:
    text = pad + json.dumps(value, ensure_ascii=ascii_only) + pad
    assert _same(_fastjson.loads(text), json.loads(text))
    data = text.encode("utf-8", "surrogatepass")
    assert _same(_fastjson.loads(data), json.loads(data))
    assert _same(_fastjson.loads(bytearray(data)), json.loads(data))


@given(st.text(max_size=40) | st.binary(max_size=40).map(lambda b: b"{" + b))
@settings(max_examples=600, deadline=None)
def test_any_input_gives_json_s_value_or_json_s_error(document: str | bytes) -> None:
    assert _same(_outcome(_fastjson.loads, document), _outcome(json.loads, document))


@pytest.mark.parametrize(
    "document",
    [
        "",
        " ",
        "{",
        '{"a": 1} x',
        '{"a": 1}{}',
        "\ufeff{}",
        b"\xef\xbb\xbf{}",
        '{"a": "\x01"}',
        "[1,]",
        "nan",
        b"\xff\xfe{\x00}\x00",
        '{"a": 1}'.encode("utf-16"),
        '{"a": 1}'.encode("utf-32-le"),
        b'{"a": "\xe9"}',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_edge_documents_match_json(document: str | bytes) -> None:
    assert _same(_outcome(_fastjson.loads, document), _outcome(json.loads, document))


def test_non_standard_constants_and_big_numbers() -> None:
    text = "[NaN, Infinity, -Infinity, 1e400, 12345678901234567890, -0.0, 1.5]"
    assert _same(_fastjson.loads(text), json.loads(text))
    values = [math.inf, -math.inf, 10**30, -0.0, 1e-7, True, None]
    assert _fastjson.dumps(values) == json.dumps(values)


def test_what_json_cannot_serialize_raises_json_s_error() -> None:
    for bad in ({"a": object()}, [1, {2, 3}], {(1, 2): 3}, b"bytes"):
        with pytest.raises(TypeError) as ours:
            _fastjson.dumps(bad)
        with pytest.raises(TypeError) as theirs:
            json.dumps(bad)
        assert str(ours.value) == str(theirs.value)
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        _fastjson.dumps(loop)


def test_non_string_keys_and_subclasses_as_json_does() -> None:
    class Text(str):
        pass

    class Count(int):
        pass

    value = {1: "a", 2.5: None, False: [Text("t"), Count(3)], None: 0, Text("k"): -1}
    assert _fastjson.dumps(value) == json.dumps(value)
    assert _fastjson.dumps(Text("é")) == json.dumps(Text("é"))


def test_without_the_accelerator_it_is_json_itself() -> None:
    probe = (
        "import sys\n"
        "sys.modules['_json'] = None  # as on an interpreter without the C accelerator\n"
        "from ctxrelay import _fastjson\n"
        "assert _fastjson._scan is None and _fastjson._encoders is None\n"
        "assert _fastjson.loads(b' {\"a\": [1, NaN]} ')['a'][0] == 1\n"
        "assert _fastjson.dumps({'a': 'é'}, ensure_ascii=False) == '{\"a\": \"é\"}'\n"
        "try:\n"
        "    _fastjson.loads('{')\n"
        "except ValueError as exc:\n"
        "    assert type(exc).__name__ == 'JSONDecodeError'\n"
        "else:\n"
        "    raise AssertionError('accepted {')\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_importing_it_imports_neither_json_nor_re() -> None:
    probe = (
        "import sys\n"
        "from ctxrelay import _fastjson\n"
        '_fastjson.dumps(_fastjson.loads(\'{"a": [1, 2.5, "x"]}\'))\n'
        "loaded = {'json', 're', 'typing', 'enum'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


@pytest.mark.parametrize(
    "document", [b'{"a":1,x}', b'{"a" 1}', b"[1,,2]", b'{"a":"\\q"}', b'{"a":1}x', "{"]
)
def test_a_malformed_document_is_json_s_error_before_json_is_imported(
    document: str | bytes,
) -> None:
    """In a process that has not imported ``json`` (the hooks', the analyzer's), the C
    scanner cannot raise its own error (found by fuzzing the analyzer's reader)."""
    probe = (
        "import sys\n"
        "from ctxrelay import _fastjson\n"
        "assert 'json.decoder' not in sys.modules\n"
        "try:\n"
        f"    _fastjson.loads({document!r})\n"
        "except ValueError as exc:\n"
        "    import json\n"
        "    try:\n"
        f"        json.loads({document!r})\n"
        "    except ValueError as theirs:\n"
        "        assert (type(exc), str(exc)) == (type(theirs), str(theirs)), (exc, theirs)\n"
        "else:\n"
        "    raise AssertionError('accepted')\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)
