"""A client of ``codex app-server --listen stdio://``: the JSON-RPC route Codex's own
``/hooks`` screen takes to list hooks and record their trust.

ctxrelay never computes a hook's hash: ``hooks/list`` hands out each hook's
``currentHash`` and ``config/batchWrite`` records exactly that value under
``hooks.state`` in the user's ``config.toml`` (Codex writes the file, keeping its
formatting). The app-server is marked experimental in Codex; every failure here is a
:class:`~ctxrelay.errors.ConfigError` saying what to do instead. Verified behaviour:
``docs/codex-facts.md`` (Trust).
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from ctxrelay.errors import ConfigError

__all__ = [
    "REPLY_TIMEOUT_S",
    "AppServer",
    "HookEntry",
    "HookListing",
    "TrustStatus",
    "trust_edit",
    "untrust_edit",
]

REPLY_TIMEOUT_S = 30.0
"""How long one request may wait for its answer before the app-server counts as broken."""

TrustStatus = str
"""``managed``, ``untrusted``, ``trusted`` or ``modified`` (Codex's words)."""


@dataclass(frozen=True, slots=True)
class HookEntry:
    """One hook as ``hooks/list`` reports it."""

    key: str
    event: str
    command: str
    source_path: str
    source: str
    current_hash: str
    trust: TrustStatus
    matcher: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> HookEntry:
        return cls(
            key=str(raw.get("key", "")),
            event=str(raw.get("eventName", "")),
            command=str(raw.get("command", "")),
            source_path=str(raw.get("sourcePath", "")),
            source=str(raw.get("source", "")),
            current_hash=str(raw.get("currentHash", "")),
            trust=str(raw.get("trustStatus", "")),
            matcher=raw.get("matcher") if isinstance(raw.get("matcher"), str) else None,
        )


@dataclass(frozen=True, slots=True)
class HookListing:
    """``hooks/list`` for one cwd: its hooks, and Codex's errors and warnings about them."""

    hooks: tuple[HookEntry, ...]
    errors: tuple[str, ...]
    warnings: tuple[str, ...]


def trust_edit(hooks: Sequence[HookEntry]) -> dict[str, Any]:
    """The ``config/batchWrite`` edit that trusts ``hooks`` at the hash Codex reported."""
    value = {hook.key: {"trusted_hash": hook.current_hash} for hook in hooks}
    return {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": value}


def _quoted(key: str) -> str:
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def untrust_edit(key: str) -> dict[str, Any]:
    """The edit that removes the trust record of one hook (its ``hooks.state`` table)."""
    return {"keyPath": f"hooks.state.{_quoted(key)}", "value": None, "mergeStrategy": "replace"}


class AppServer:
    """``codex app-server`` over stdio, for the length of a ``with`` block.

    ``env`` is the environment Codex runs with (its ``CODEX_HOME`` chooses the user
    config the trust is written to)."""

    def __init__(self, codex: Path, env: Mapping[str, str], cwd: Path | None = None) -> None:
        self._codex = codex
        self._env = dict(env)
        self._cwd = cwd
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._next_id = 0
        self._reader: threading.Thread | None = None

    def __enter__(self) -> Self:
        try:
            self._proc = subprocess.Popen(
                [str(self._codex), "app-server", "--listen", "stdio://"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=self._env,
                cwd=self._cwd,
            )
        except OSError as exc:
            raise ConfigError(f"cannot start codex app-server ({exc})") from None
        stdout = self._proc.stdout
        if stdout is None:  # both pipes were asked for
            raise ConfigError("codex app-server has no output to read")
        self._reader = threading.Thread(target=self._read, args=(stdout,), daemon=True)
        self._reader.start()
        client = {"name": "ctxrelay", "title": None, "version": "1"}
        self.request("initialize", {"clientInfo": client})
        self._send({"method": "initialized"})
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the app-server exits when its stdin closes
        try:
            proc.wait(timeout=REPLY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=REPLY_TIMEOUT_S)  # it ends at the pipe's end
        if proc.stdout is not None:
            proc.stdout.close()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: Mapping[str, Any]) -> None:
        stdin = None if self._proc is None else self._proc.stdin
        if stdin is None:
            raise ConfigError("codex app-server is not running")
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except OSError as exc:
            raise ConfigError(f"codex app-server stopped reading ({exc})") from None

    def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """Send one request and return its ``result``; notifications in between are
        skipped. An error answer, an exit or silence past the timeout raises."""
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        while True:
            try:
                line = self._lines.get(timeout=REPLY_TIMEOUT_S)
            except queue.Empty:
                raise ConfigError(f"codex app-server did not answer {method}") from None
            if line is None:
                raise ConfigError(f"codex app-server exited before answering {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("id") != ident:
                continue
            if "error" in message:
                detail = message["error"]
                text = detail.get("message") if isinstance(detail, dict) else detail
                raise ConfigError(f"codex app-server refused {method}: {text}")
            return message.get("result")

    def hooks(self, cwd: Path) -> HookListing:
        """``hooks/list`` as seen from ``cwd``."""
        result = self.request("hooks/list", {"cwds": [str(cwd)]})
        data = result.get("data") if isinstance(result, dict) else None
        if not isinstance(data, list) or not data or not isinstance(data[0], dict):
            raise ConfigError("codex app-server answered hooks/list without hooks")
        entry = data[0]
        hooks = entry.get("hooks")
        errors, warnings = entry.get("errors"), entry.get("warnings")
        return HookListing(
            tuple(HookEntry.from_json(h) for h in hooks or () if isinstance(h, dict)),
            tuple(str(e) for e in errors or ()),
            tuple(str(w) for w in warnings or ()),
        )

    def write(self, edits: Sequence[Mapping[str, Any]]) -> None:
        """``config/batchWrite`` of ``edits`` into the user config, reloaded after."""
        result = self.request("config/batchWrite", {"edits": list(edits), "reloadUserConfig": True})
        if not isinstance(result, dict) or result.get("status") != "ok":
            raise ConfigError(f"codex app-server did not write the trust ({result!r})")

    def config(self, cwd: Path) -> Mapping[str, Any]:
        """The effective config as seen from ``cwd`` (``config/read``)."""
        result = self.request("config/read", {"cwd": str(cwd)})
        config = result.get("config") if isinstance(result, dict) else None
        return config if isinstance(config, dict) else {}

    def user_config(self, cwd: Path) -> Mapping[str, Any]:
        """The user layer alone (``config.toml`` in ``CODEX_HOME``), as Codex read it."""
        result = self.request("config/read", {"cwd": str(cwd), "includeLayers": True})
        layers = result.get("layers") if isinstance(result, dict) else None
        for layer in layers or ():
            name = layer.get("name") if isinstance(layer, dict) else None
            if isinstance(name, dict) and name.get("type") == "user":
                config = layer.get("config")
                return config if isinstance(config, dict) else {}
        return {}
