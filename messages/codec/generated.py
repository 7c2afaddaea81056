"""Compiling the codec's generated functions with their source registered in `linecache`, as attrs does for the
methods it generates (`attr._make._linecache_and_compile`): a debugger steps into a generated encoder or decoder
line by line, and a traceback through one shows its lines, instead of "<fastcodec X>, line 3" and nothing.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any


def generate(source: str, name: str, kind: str, cls: type, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Compile ``source`` (which defines the function ``name``) in ``namespace`` and return that function; its
    file name, ``<messages.codec KIND module.Class>`` (``-2``, ``-3``... when taken by other source), holds
    ``source`` in linecache for as long as the process runs (one entry per class and kind: bounded)."""
    base = f"<messages.codec {kind} {cls.__module__}.{cls.__qualname__}>"
    filename, n = base, 1
    lines = source.splitlines(True)
    while True:
        entry = linecache.cache.get(filename)
        if entry is None or entry[2] == lines:  # free, or this very source (a class re-generated)
            break
        n += 1
        filename = f"{base[:-1]}-{n}>"
    code = compile(source, filename, "exec")
    # mtime None: linecache.checkcache never drops the entry (there is no file to compare with)
    linecache.cache[filename] = (len(source), None, lines, filename)
    exec(code, namespace)  # noqa: S102 - our own generated source
    return namespace[name]  # type: ignore[no-any-return]
