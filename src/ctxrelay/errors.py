"""One root exception with structured subclasses.

Every error ctxrelay raises on purpose derives from :class:`CtxrelayError`, and its
message is one sentence a user can act on; the CLI prints it and exits non-zero.
The pure policy core raises :class:`ctxrelay.budget.BudgetValueError` (a ``ValueError``)
because it imports nothing of ours; hosts treat it like a :class:`ConfigError`.
"""

from __future__ import annotations

import time

__all__ = [
    "ConfigError",
    "ContextOverflowError",
    "ConversationError",
    "CtxrelayError",
    "DispatchBlockedError",
    "HookPayloadError",
    "MalformedResponseError",
    "MissingExtraError",
    "ModelUnavailableError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "RequestTooLargeError",
    "ServerStateError",
    "SessionBusyError",
    "SessionInUseError",
    "SessionNotFoundError",
    "StaleWindowError",
    "StoreError",
    "StoreUnavailableError",
    "TranscriptError",
    "UnknownModelError",
    "UnsupportedFrameworkError",
    "UnsupportedSchemaError",
    "WindowNotFoundError",
]


class CtxrelayError(Exception):
    """Root of every error ctxrelay raises on purpose."""


class ConfigError(CtxrelayError):
    """An option, flag or configuration value is invalid."""


class ConversationError(ConfigError):
    """A framework handed one relay a second conversation: a relay is one conversation
    (one ctxrelay session), and its window would carry the first one's messages into the
    second's requests. Nothing was stored or sent.

    ``session_id`` is the relay's session, ``bound`` the framework's key of the
    conversation it holds (``None``: known only by its stored messages), ``given`` what
    the framework handed it (``thread_id='bob'``, another session's memory)."""

    def __init__(self, session_id: str, bound: str | None, given: str, framework: str) -> None:
        self.session_id = session_id
        self.bound = bound
        self.given = given
        self.framework = framework
        held = f"the conversation {bound}" if bound else "another conversation"
        super().__init__(
            f"the relay of session {session_id!r} holds {held}, and {framework} handed it "
            f"{given}; nothing was sent. Open one relay per conversation, with the "
            "conversation's own key as its session (relay = ....open(store, "
            "session_id=KEY, ...))"
        )


class MissingExtraError(CtxrelayError, ImportError):
    """An optional dependency is not installed; the message names the extra."""

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(
            f"{feature} needs the optional dependencies of the '{extra}' extra: "
            f"pip install 'ctxrelay[{extra}]'"
        )


class UnsupportedFrameworkError(MissingExtraError):
    """An integration's framework is installed at a version outside the range ctxrelay
    supports (the extra's range): ``distribution``, ``version`` and ``supported`` say which."""

    def __init__(
        self, feature: str, extra: str, distribution: str, version: str, supported: str
    ) -> None:
        self.feature = feature
        self.extra = extra
        self.distribution = distribution
        self.version = version
        self.supported = supported
        super(MissingExtraError, self).__init__(
            f"{feature} supports {distribution}{supported}, not the installed {version}: "
            f"pip install 'ctxrelay[{extra}]'"
        )


class HookPayloadError(CtxrelayError, ValueError):
    """A Claude Code hook payload lacks a field or has one of the wrong type."""

    def __init__(self, event: str, field: str, expected: str) -> None:
        self.event = event
        self.field = field
        super().__init__(f"the {event} payload's {field} is not {expected}")


class StoreError(CtxrelayError):
    """The session store failed; nothing committed was lost."""


class StoreUnavailableError(StoreError):
    """The store cannot be opened: not a database, server down, login refused."""


class UnsupportedSchemaError(StoreError):
    """The database was written by a newer ctxrelay; it is left untouched."""

    def __init__(self, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            f"the database has schema version {found}, newer than the {supported} this "
            "ctxrelay understands; upgrade ctxrelay to open it"
        )


class SessionNotFoundError(StoreError):
    """No session with that id exists in the store."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"no session {session_id!r} in this store")


class StaleWindowError(StoreError):
    """A write named a window that is not the session's open one (another worker sealed it
    first, or it belongs elsewhere); nothing was written."""

    def __init__(self, window_id: str, why: str) -> None:
        self.window_id = window_id
        super().__init__(f"window {window_id!r} is not the session's open window: {why}")


class WindowNotFoundError(StoreError):
    """A history read named a window the session cannot see (absent, or before the newest
    manual reset)."""

    def __init__(self, session_id: str, index: int) -> None:
        self.session_id = session_id
        self.index = index
        super().__init__(
            f"window {index} is not in this session's visible history "
            "(it does not exist or precedes the newest manual reset)"
        )


class SessionInUseError(StoreError):
    """Another run holds the session's lease (one driver per session): nothing was done.

    ``holder`` says who (``pid 4242 on build-7``), ``since`` when it took the lease (Unix
    seconds), ``held_for`` how long it had held it when this error was raised (seconds)
    and ``expires_at`` when the lease lapses unless its holder renews it; ``mine`` is
    true when the holder is this very process (another run of this process, perhaps one
    whose end ctxrelay did not see); ``lost`` is true when this run held the lease and
    another took it over. Every field is in the message."""

    def __init__(
        self,
        session_id: str,
        holder: str,
        since: float,
        expires_at: float,
        *,
        lost: bool = False,
        mine: bool = False,
        now: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.holder = holder
        self.since = since
        self.expires_at = expires_at
        self.lost = lost
        self.mine = mine
        self.held_for = max(0.0, (time.time() if now is None else now) - since)
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since))
        lapses = time.strftime("%H:%M:%S UTC", time.gmtime(expires_at))
        if lost:
            super().__init__(
                f"this run lost session {session_id!r} to {holder}, which took it over at "
                f"{when} (this run did not renew its lease in time); nothing more was sent"
            )
            return
        who = "this process" if mine else "another process"
        todo = (
            "another run of this process still holds it: let that run end first, or call "
            "relay.close() if it ended without ctxrelay seeing its end; pass wait=SECONDS "
            "to wait for it"
            if mine
            else "pass wait=SECONDS to wait for it to finish"
        )
        super().__init__(
            f"session {session_id!r} is in use by {holder} since {when} ({who}, held for "
            f"{self.held_for:.0f} s, lapsing at {lapses} unless renewed); {todo}"
        )


SessionBusyError = SessionInUseError
"""The earlier name of :class:`SessionInUseError` (the runtime's dispatch lock is the
session's lease)."""


class ProviderError(CtxrelayError):
    """The model provider failed in a way retries did not fix."""


class ContextOverflowError(ProviderError):
    """The provider refused a request as longer than the model's context: its count
    disagreed with ours. The runtime answers with an emergency rollover (or a safe
    pause when even a fresh window would overflow); nothing was lost."""


class ProviderStatusError(ProviderError):
    """The provider answered with an HTTP error status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class ProviderAuthError(ProviderStatusError):
    """The API key is missing, or the provider rejected it (401/403)."""


class ModelUnavailableError(ProviderStatusError):
    """The provider does not know the model or refuses to serve it to this key."""


class ProviderTimeoutError(ProviderError):
    """The provider did not answer (or stopped streaming) within the timeout."""


class ProviderConnectionError(ProviderError):
    """The provider's server cannot be reached (wrong base URL, server down, no network)."""


class MalformedResponseError(ProviderError):
    """The provider's stream broke off or carried something that is not its wire format."""


class UnknownModelError(ConfigError):
    """The model registry does not know the model's context window; ``--limit`` gives it."""


class ServerStateError(ConfigError):
    """A framework run keeps its conversation on the provider's server (the Responses
    API's ``previous_response_id``, ``conversation_id``, a compaction session): ctxrelay
    decides what each request carries, so it needs the history on the client.
    ``argument`` names what to leave out."""

    def __init__(self, argument: str) -> None:
        self.argument = argument
        super().__init__(
            f"{argument} keeps the conversation on the provider's server, where ctxrelay "
            "cannot choose what each request carries; leave it out: ctxrelay keeps the "
            "history on the client and sends the open window itself"
        )


class RequestTooLargeError(CtxrelayError):
    """A request cannot fit even in a fresh window; nothing was sent."""

    def __init__(self, tokens: int, usable_limit: int) -> None:
        self.tokens = tokens
        self.usable_limit = usable_limit
        super().__init__(
            f"the request needs about {tokens:,} tokens, more than the usable limit of "
            f"{usable_limit:,} even in a fresh window; nothing was sent"
        )


class DispatchBlockedError(CtxrelayError):
    """A framework integration's request was blocked by the policy (slider Off over the
    usable limit, or a request that not even a fresh window holds): nothing was sent to
    the model."""


class TranscriptError(CtxrelayError):
    """A Claude Code transcript cannot be read (missing, not a regular file, unreadable,
    empty, not JSON lines), or ``lines`` of it were skipped (longer than the line cap).
    ``path`` names the file, ``reason`` says why in a few words."""

    def __init__(self, path: str, reason: str, lines: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.lines = lines
        what = f"{lines} line{'s' if lines != 1 else ''} of " if lines is not None else ""
        super().__init__(f"cannot read {what}the transcript {path}: {reason}")

    def __reduce__(self) -> tuple[type[TranscriptError], tuple[str, str, int | None]]:
        return type(self), (self.path, self.reason, self.lines)  # crosses processes
