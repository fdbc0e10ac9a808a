"""Build hook: compile the analyzer reader's C accelerator (``ctxrelay.transcripts._native``).

The accelerator is optional: ``ctxrelay.transcripts._pass`` is the reference and runs
without it, about twice as slow on a corpus. So a machine without a C compiler still
installs ctxrelay, with a warning; ``CTXRELAY_REQUIRE_NATIVE=1`` (which CI sets) turns
the warning into a failed install, so a build that silently lost it cannot pass.

The compiler and its flags are the interpreter's own (``sysconfig``), as setuptools
would use them. An editable install compiles next to the source, where the editable
path finds it; a wheel gets it in its ``ctxrelay/transcripts/`` and a platform tag.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("src/ctxrelay/transcripts/_native.c")
MODULE = "ctxrelay/transcripts/_native"


def _compile(source: Path, target: Path) -> None:
    config = sysconfig.get_config_vars()
    # CC, LDSHARED and CFLAGS in the environment win, as with setuptools
    compiler = shlex.split(os.environ.get("CC") or str(config.get("CC") or "cc"))
    link = shlex.split(
        os.environ.get("LDSHARED")
        or (f"{os.environ['CC']} -shared" if os.environ.get("CC") else "")
        or str(config.get("LDSHARED") or f"{compiler[0]} -shared")
    )
    flags = [
        *shlex.split(str(config.get("CFLAGS") or "")),
        *shlex.split(os.environ.get("CFLAGS", "")),
        *shlex.split(str(config.get("CCSHARED") or "")),
        "-O3",
        "-D_GNU_SOURCE",
        f"-I{sysconfig.get_paths()['include']}",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        obj = Path(scratch) / "_native.o"
        for command in (
            [*compiler, *flags, "-c", str(source), "-o", str(obj)],
            [*link, str(obj), "-o", str(target)],
        ):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{shlex.join(command)}\n{done.stdout}{done.stderr}")


class NativeReaderHook(BuildHookInterface):
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
        try:
            _compile(root / SOURCE, target)
        except (OSError, RuntimeError) as exc:
            message = (
                "ctxrelay: the C reader (ctxrelay.transcripts._native) could not be built, "
                "so 'ctxrelay analyze' will read transcripts in pure Python, about twice "
                f"as slow. The compiler said:\n{exc}"
            )
            if os.environ.get("CTXRELAY_REQUIRE_NATIVE"):
                raise RuntimeError(message) from None
            sys.stderr.write(f"WARNING: {message}\n")
            return
        if version != "editable":
            build_data["force_include"][str(target)] = f"{MODULE}{suffix}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
