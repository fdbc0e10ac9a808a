"""The build hook (``hatch_build.py``) compiles the C reader, or says loudly why not.

The C reader is optional: without a compiler ctxrelay installs and reads in pure
Python, with a warning that names the compiler's words; with
``CTXRELAY_REQUIRE_NATIVE=1`` (CI) the same failure stops the install.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import hatch_build  # the project's root, beside pyproject.toml (pytest's rootdir)
import pytest

PROJECT = Path(__file__).resolve().parents[1]
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def test_it_builds_a_c_reader_that_reads_as_the_python_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CC", raising=False)
    package = tmp_path / "ctxrelay_probe"
    package.mkdir()
    target = package / f"_native{SUFFIX}"
    if hatch_build.build_native(PROJECT / hatch_build.SOURCE, target) is not None:
        pytest.skip("no C compiler here")  # the next test shows what a user then sees
    line = b'{"type":"assistant","message":{"id":"m1","model":"x","usage":{"output_tokens":3}}}\n'
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('ctxrelay.transcripts._native', "
        f"{str(target)!r})\n"
        "native = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(native)\n"
        f"print(native.read({line!r}, False))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == (
        "(None, None, [('m1', 'x', (0, 0, 0, 3, 0), False, 0, None, None, None)], [], 1, 0, 0)"
    )


def test_without_a_compiler_it_warns_and_names_the_compiler_s_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "false")  # a compiler that fails, saying nothing
    monkeypatch.delenv("CTXRELAY_REQUIRE_NATIVE", raising=False)
    warning = hatch_build.build_native(PROJECT / hatch_build.SOURCE, tmp_path / "x.so")
    assert warning is not None
    assert warning.startswith("ctxrelay: the C reader (ctxrelay.transcripts._native) could")
    assert "pure Python" in warning
    assert "Install a C compiler" in warning
    assert "false " in warning  # the command that failed
    assert not (tmp_path / "x.so").exists()
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("PATH", str(tmp_path))  # and no cc to fall back on
    missing = hatch_build.build_native(PROJECT / hatch_build.SOURCE, tmp_path / "x.so")
    assert missing is not None
    assert "no-such-compiler" in missing


def test_when_it_is_required_a_failed_build_fails_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "false")
    monkeypatch.setenv("CTXRELAY_REQUIRE_NATIVE", "1")
    with pytest.raises(RuntimeError, match="could not be built"):
        hatch_build.build_native(PROJECT / hatch_build.SOURCE, tmp_path / "x.so")


def test_this_install_has_the_c_reader_where_ci_requires_it() -> None:
    from ctxrelay.transcripts._pass import has_c_pass
    from tests.conftest import need

    if not has_c_pass():
        need("NATIVE", "the C reader was not built (no C compiler when ctxrelay was installed)")
