"""Build hook: compile the analyzer reader's C accelerator (``ctxrelay.transcripts._native``).

The accelerator is optional: ``ctxrelay.transcripts._pass`` is the reference and runs
without it, 1.5 to 2 times as slow on a corpus. So a machine without a C compiler still
installs ctxrelay, with a warning; ``CTXRELAY_REQUIRE_NATIVE=1`` (which CI sets) turns
the warning into a failed install, so a build that silently lost it cannot pass.

The compiler and its flags are the interpreter's own (``sysconfig``), as setuptools
would use them; ``CC``, ``CFLAGS`` and ``LDSHARED`` in the environment win, and a
configured compiler that is not installed gives way to ``cc``. An editable install
compiles next to the source, where the editable path finds it; a wheel gets it in its
``ctxrelay/transcripts/`` and a platform tag. ``tests/test_build_hook.py`` builds it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.config import BuilderConfig
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("src/ctxrelay/transcripts/_native.c")
MODULE = "ctxrelay/transcripts/_native"


def _commands(source: Path, obj: Path, target: Path) -> list[list[str]]:
    """The compile and link commands, from the interpreter's configuration."""
    config = sysconfig.get_config_vars()
    compiler = shlex.split(os.environ.get("CC") or str(config.get("CC") or "cc"))
    link = shlex.split(
        os.environ.get("LDSHARED")
        or (f"{os.environ['CC']} -shared" if os.environ.get("CC") else "")
        or str(config.get("LDSHARED") or f"{compiler[0]} -shared")
    )
    if shutil.which(compiler[0]) is None and shutil.which("cc") is not None:
        # e.g. an interpreter built with clang on a machine that has only gcc as cc
        if link[0] == compiler[0]:
            link[0] = "cc"
        compiler[0] = "cc"
    flags = [
        *shlex.split(str(config.get("CFLAGS") or "")),
        *shlex.split(os.environ.get("CFLAGS", "")),
        *shlex.split(str(config.get("CCSHARED") or "")),
        "-O3",
        "-D_GNU_SOURCE",
        f"-I{sysconfig.get_paths()['include']}",
    ]
    return [
        [*compiler, *flags, "-c", str(source), "-o", str(obj)],
        [*link, str(obj), "-o", str(target)],
    ]


def build_native(source: Path, target: Path) -> str | None:
    """Compile ``source`` into the extension module ``target``. ``None`` when it was
    built; else the warning to show (it is an error, raised as ``RuntimeError``, when
    ``CTXRELAY_REQUIRE_NATIVE`` is set)."""
    with tempfile.TemporaryDirectory() as scratch:
        failure = None
        for command in _commands(source, Path(scratch) / "_native.o", target):
            try:
                done = subprocess.run(command, capture_output=True, text=True, check=False)
            except OSError as exc:
                failure = f"{shlex.join(command)}\n{exc}"
                break
            if done.returncode != 0:
                failure = f"{shlex.join(command)}\n{done.stdout}{done.stderr}"
                break
    if failure is None:
        return None
    message = (
        "ctxrelay: the C reader (ctxrelay.transcripts._native) could not be built, so "
        "'ctxrelay analyze' will read transcripts in pure Python, 1.5 to 2 times as slow. "
        f"Install a C compiler and reinstall to build it. The compiler said:\n{failure}"
    )
    if os.environ.get("CTXRELAY_REQUIRE_NATIVE", "") not in ("", "0"):
        raise RuntimeError(message)
    return message


class NativeReaderHook(BuildHookInterface[BuilderConfig]):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or sys.platform == "win32":
            return
        root = Path(self.root)
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        if version == "editable":
            target = root / "src" / f"{MODULE}{suffix}"
        else:
            target = Path(self.directory) / "native" / f"_native{suffix}"
            target.parent.mkdir(parents=True, exist_ok=True)
        warning = build_native(root / SOURCE, target)
        if warning is not None:
            sys.stderr.write(f"WARNING: {warning}\n")
            return
        if version != "editable":
            build_data["force_include"][str(target)] = f"{MODULE}{suffix}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
