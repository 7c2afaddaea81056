"""A trace header's ``disk`` (docs/trace-format.md): what a broker's disk became between two incarnations, done to a
replay's scratch log dir before the incarnation reads it.

A trace records a broker's inputs, not what its disk lost: the simulator (sim/disk.py's `DiskChange`) writes into an
incarnation's header what its disk kept after a power loss — every file as a prefix of what a path held just before,
plus its torn tail, and every directory (anything else is gone) — or that it starts on a new, empty disk. A replay of
the broker's chain holds in its scratch log dir exactly what the disk held just before (every earlier write, replayed),
so doing the same there gives the incarnation the disk the simulated broker found, to the byte.
"""

from __future__ import annotations

import base64
import os
import shutil
from typing import Any

from kactor.trace.reader import TraceError


def _inside(top: str, rel: Any) -> str:
    """``rel`` under ``top``, refusing a path that leaves it (a header must not make a replay touch other files)."""
    if not isinstance(rel, str) or os.path.isabs(rel):
        raise TraceError(f"disk change: bad path {rel!r}")
    path = os.path.normpath(os.path.join(top, rel))
    if path != top and not path.startswith(top + os.sep):
        raise TraceError(f"disk change: path {rel!r} leaves the log dir")
    return path


def apply_disk_change(change: dict[str, Any], log_dir: str) -> None:
    """Make ``log_dir`` (a replay's scratch log dir) what the header's ``disk`` value ``change`` says the recorded
    log dir became: a new disk leaves nothing of it; a power loss leaves the listed directories and files, each
    file the first ``keep`` bytes of ``from`` (default: its own path; null: nothing) as they are now, then its
    ``tail`` (base64) or ``zeros``. Raises TraceError when a file to keep is not there (the broker's earlier
    incarnations were not replayed first on this dir)."""
    top = os.path.normpath(log_dir)
    if change.get("new"):
        shutil.rmtree(top, ignore_errors=True)
        return
    try:
        dirs = {_inside(top, d) for d in change["dirs"]}
        wanted: dict[str, bytes | None] = {}  # path -> its new bytes (None: as it is)
        for entry in change["files"]:
            path = _inside(top, entry["path"])
            keep = int(entry["keep"])
            source = entry.get("from", entry["path"])
            tail = base64.b64decode(entry["tail"]) if "tail" in entry else bytes(int(entry.get("zeros", 0)))
            if source == entry["path"] and not tail and os.path.exists(path) and os.path.getsize(path) == keep:
                wanted[path] = None  # the common case: a file the power loss did not touch
                continue
            head = b""
            if source is not None:
                with open(_inside(top, source), "rb") as f:
                    head = f.read(keep)
            if len(head) != keep:
                raise TraceError(f"disk change: {source} holds {len(head)} bytes, {keep} to keep (replay the "
                                 "broker's earlier incarnations first, on the same dir)")
            wanted[path] = head + tail
    except FileNotFoundError as e:
        raise TraceError(f"disk change: {e.filename} not there (replay the broker's earlier incarnations first, "
                         "on the same dir)") from None
    except (KeyError, TypeError, ValueError) as e:
        raise TraceError(f"disk change: bad header ({e.__class__.__name__}: {e})") from None
    # every source read: now what the power loss took goes, deepest first, then the rest is written
    for root, subdirs, names in os.walk(top, topdown=False):
        for name in names:
            path = os.path.join(root, name)
            if path not in wanted:
                os.unlink(path)
        for name in subdirs:
            path = os.path.join(root, name)
            if path not in dirs:
                shutil.rmtree(path, ignore_errors=True)
    if top not in dirs and os.path.isdir(top):
        shutil.rmtree(top, ignore_errors=True)
    for d in sorted(dirs):
        os.makedirs(d, exist_ok=True)
    for path, data in wanted.items():
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
