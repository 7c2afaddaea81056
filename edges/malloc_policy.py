"""A live broker process's allocator policy: large buffers come from a heap that is kept, not from fresh mappings.

A broker's data path is made of buffers of up to a few megabytes: a socket's read buffer, a request frame cut from
it, a Produce request's records, a Fetch answer's frame. glibc serves an allocation of 128 KB or more with a new
mmap (its dynamic threshold rises to the largest block freed, at most 32 MB) and gives heap tops above
M_TRIM_THRESHOLD back to the kernel, so the next large buffer's pages are new and each 4 KB page faults in on first
touch. On this project's VMs that fault costs microseconds: copying a 1 MB answer three times took 2.18 ms into
fresh buffers and 0.10 ms into reused ones (`python -m bench.malloc_policy`; docs/performance.md). Kafka's buffers
live in a JVM heap that is touched once.

`install` raises the mmap threshold to ``MMAP_THRESHOLD`` (buffers below it come from the heap and are reused) and
keeps up to ``TRIM_THRESHOLD`` of free heap top: a broker's memory is still bounded by its peak use (what it keeps
it had to hold once), as a client that pipelines fetches is bounded by connection muting. A user who set glibc's
own ``MALLOC_*_`` variables keeps them; on a C library without mallopt nothing changes. Only a live broker
process installs it (``kactor.broker_process``), as `edges.gc_policy`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Mapping
from typing import Any

M_TRIM_THRESHOLD = -1  # glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 8 << 20  # a 1 MB fetch answer and a 5 MB produce request come from the heap
TRIM_THRESHOLD = 32 << 20
# glibc reads these at start-up; one of them set means the user chose the allocator's behaviour
USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None


def install(libc: Any = None, environ: Mapping[str, str] | None = None) -> bool:
    """mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) unless the user set
    glibc's variables or the C library has no mallopt; whether both were set."""
    env = os.environ if environ is None else environ
    if any(v in env for v in USER_VARIABLES):
        return False
    try:
        lib = _libc() if libc is None else libc
        mallopt = getattr(lib, "mallopt", None)
    except OSError:
        return False
    if mallopt is None:
        return False
    # mallopt returns 1 on success
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
