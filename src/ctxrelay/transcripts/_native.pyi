# The C accelerator of ctxrelay.transcripts._pass (_native.c); that module is the reference.
from typing import Any, Final

UNSURE: Final[object]

def spans(data: Any, /) -> list[tuple[int, int, int]]: ...
def usage_record(data: Any, start: int, end: int, needle: int, /) -> Any: ...
