# The C version of ctxrelay.transcripts._pass's forward pass (_native.c); that module is
# the reference.
from typing import Any, TypeAlias

_Usage: TypeAlias = tuple[int, int, int, int, int]
_Entry: TypeAlias = tuple[str, str | None, _Usage, bool, int, str | None, str | None, str | None]
_Compaction: TypeAlias = tuple[int | None, str | None, int, int, str | None]

def spans(data: Any, /) -> list[tuple[int, int, int]]: ...
def read(
    data: Any, agent: bool, /
) -> tuple[str | None, str | None, list[_Entry], list[_Compaction], int, int, int] | None: ...
