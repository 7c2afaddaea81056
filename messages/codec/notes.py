"""Texts that values arrived as: a body the transport decoded from a frame is written to the trace as the frame's
text, not encoded again (re-encoding a 1.3 MB LeaderAndIsr for the trace cost ~48 ms of the I/O thread, which
shares the GIL with the driver; docs/performance-log.md, "Frames split at their body").

An edge that decoded a value from JSON text calls `note_text` when `wanted()` (a trace writer is open in this
process); the trace's line encoder (`orjson_lines`) then writes the value as that text. The text is the codec's
own for that value (the transport writes frames with this codec, tests/edges/test_edges_frame_codec.py), so a
line is the same bytes either way; only the work differs. Keys are id()s: every noted value is held here, so its id
cannot be reused by another value, until `release` — a trace writer's flush, by which time the values noted before
it have been recorded (a line is encoded as its message is recorded); a value still waiting in the inbox is
re-encoded instead, to the same text.
"""

from __future__ import annotations

import threading
from typing import Any

from messages.codec.orjson_lines import forget_texts, remember_text

_lock = threading.Lock()
_held: dict[int, Any] = {}  # id → the value noted, alive until released
_holders = 0  # open trace writers in this process


def wanted() -> bool:
    """Whether a noted text can be used (a trace writer is open): an edge skips making the text otherwise."""
    return _holders > 0


def note_text(value: Any, text: str) -> None:
    """``value`` was decoded from this JSON ``text``: trace lines write the text instead of encoding the value."""
    if _holders:
        with _lock:  # not the GIL alone: release swaps the dict, and a note must not land in the old one
            _held[id(value)] = value
            remember_text(value, text)


def hold() -> None:
    """A trace writer opens: notes are kept from now on."""
    global _holders
    with _lock:
        _holders += 1


def unhold() -> None:
    """A trace writer closed: with none left, every note goes."""
    global _holders
    with _lock:
        _holders = max(0, _holders - 1)
    if not _holders:
        release()


def release() -> None:
    """Forget the texts noted until now (a trace writer flushed: their values are recorded)."""
    global _held
    with _lock:
        held, _held = _held, {}
    forget_texts([k for k in held if k not in _held])  # a value noted again meanwhile keeps its text
    del held  # only now may those values go
