"""A simulated disk (issue #28): one broker's log dirs in memory, with fsync semantics, a power loss that keeps only
what a real disk would, and a log dir that fails.

`SimDisk` implements core/disk.py's `Disk` (what the logs call instead of ``os``) over a namespace of paths:

- each file is an inode holding its bytes (a bytearray) and the bytes last forced by an fsync of it;
- namespace changes (a file created, renamed, unlinked; a directory made or removed) take effect at once and are
  journalled, as ext4's ordered metadata journal does: a power loss keeps a seeded PREFIX of the changes since the
  last commit (so a rename is kept or not, never half), and any fsync — of a file or of a directory — commits the
  whole journal (ext4's fsync commits the running transaction). So a rename or an unlink is durable only after a
  directory fsync (or another fsync after it), and a new file's name survives once something was fsynced since;
- `power_loss` (the machine loses power: every process on it dies) rebuilds the disk as a reboot finds it: the
  namespace at the last commit plus a seeded prefix of the journal, and per surviving file its fsynced bytes plus a
  seeded share of what was written after them, torn at any byte, sometimes followed by zeros (a size extended before
  its data reached the disk, as XFS and ext4's writeback mode can leave). A file rewritten or truncated since its
  fsync keeps either its fsynced bytes or a prefix of its new ones. Everything is then durable (the disk is what it
  is after the reboot). A process crash loses nothing: the page cache outlives the process, so the sim's crashes
  do not touch the disk;
- `fail_dir(path)`: from then on every call on a path under it, or on a descriptor opened there, raises
  ``OSError(EIO)`` — a disk gone bad under a log dir, which the logs turn into KafkaStorageError and the replica
  manager into LogDirFailure. ``exists`` and ``isdir`` answer False there, as ``os.path``'s do on an error.

A power loss returns, and a replaced disk is, a `DiskChange`: what the disk kept, as a value the sim writes into
the broker's next trace header (docs/trace-format.md, "disk"), so that `kactor trace replay` can do the same to its
scratch log dir before replaying that incarnation.

Deterministic: the only randomness is the ``random.Random`` given, drawn in path order.
"""

from __future__ import annotations

import base64
import errno
import io
import os
import random
from collections.abc import Callable
from typing import Any

import attrs

# namespace ops, as journalled: ("link", path, inode) | ("unlink", path) | ("rename", src, dst) | ("mkdir", path)
# | ("rmdir", path)
_Op = tuple


@attrs.frozen
class KeptFile:
    """One file after a power loss: the first ``keep`` bytes ``source`` held just before (a path of the disk then;
    None: a file no path named any more, an unlink or a rename over it undone), then ``tail``: torn bytes, zeros,
    or a rewritten file's fsynced bytes beyond what it shares with its newer ones."""

    path: str
    source: str | None
    keep: int
    tail: bytes = b""

    def header(self, top: str) -> dict[str, Any]:
        """The trace header's entry (docs/trace-format.md), paths relative to the log dir ``top``."""
        entry: dict[str, Any] = {"path": os.path.relpath(self.path, top), "keep": self.keep}
        if self.source != self.path:
            entry["from"] = None if self.source is None else os.path.relpath(self.source, top)
        if self.tail:
            if self.tail.count(0) == len(self.tail):
                entry["zeros"] = len(self.tail)
            else:
                entry["tail"] = base64.b64encode(self.tail).decode("ascii")
        return entry


@attrs.frozen
class DiskChange:
    """What a broker's disk became between two incarnations: a power loss's namespace and files (``files``: every
    file there is after it, ``dirs``: every directory; any other path is gone), or a new, empty disk (``new_disk``:
    the failed one replaced). ``lost_files``/``lost_bytes``: what the power loss cost, for the run's event log."""

    new_disk: bool = False
    files: tuple[KeptFile, ...] = ()
    dirs: tuple[str, ...] = ()
    lost_files: int = 0
    lost_bytes: int = 0

    def header(self, top: str) -> dict[str, Any]:
        """The trace header's ``disk`` value for the log dir ``top`` (docs/trace-format.md): only what lies under it,
        paths relative to it (the log dir itself is ``"."``)."""
        if self.new_disk:
            return {"log_dir": top, "new": True}
        return {"log_dir": top, "new": False,
                "dirs": [os.path.relpath(d, top) for d in self.dirs if _under(d, top)],
                "files": [f.header(top) for f in self.files if _under(f.path, top)]}


NEW_DISK = DiskChange(new_disk=True)


class _Inode:
    __slots__ = ("data", "synced", "mtime")

    def __init__(self, mtime: float) -> None:
        self.data = bytearray()
        self.synced: bytes | None = None  # the bytes the last fsync forced (None: never fsynced)
        self.mtime = mtime


class _Fd:
    __slots__ = ("inode", "path", "append", "position", "writable")

    def __init__(self, inode: _Inode | None, path: str, append: bool, writable: bool) -> None:
        self.inode = inode  # None: a directory
        self.path = path
        self.append = append
        self.position = 0
        self.writable = writable


_O_CREAT_OR_TRUNC = os.O_CREAT | os.O_TRUNC  # (O_EXCL matters only with O_CREAT)


def _error(code: int, path: str) -> OSError:
    return OSError(code, os.strerror(code), path)  # OSError(ENOENT, ...) is a FileNotFoundError, as os raises


def _ancestors(path: str) -> set[str]:
    """``path`` and every directory above it."""
    out = {path}
    while path != os.path.dirname(path):
        path = os.path.dirname(path)
        out.add(path)
    return out


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def _apply(files: dict[str, _Inode], dirs: set[str], op: _Op) -> None:
    """One namespace change on (files, dirs); the caller has checked it is valid."""
    kind = op[0]
    if kind == "link":
        files[op[1]] = op[2]
    elif kind == "unlink":
        files.pop(op[1], None)
    elif kind == "mkdir":
        dirs.add(op[1])
    elif kind == "rmdir":
        dirs.discard(op[1])
    else:  # rename, of a file or a whole directory
        src, dst = op[1], op[2]
        if src in files:
            files[dst] = files.pop(src)
            return
        prefix = src + "/"
        for path in [p for p in files if p.startswith(prefix)]:
            files[dst + path[len(src):]] = files.pop(path)
        for path in [d for d in dirs if d == src or d.startswith(prefix)]:
            dirs.discard(path)
            dirs.add(dst + path[len(src):])


class SimDisk:
    """core.disk.Disk in memory for one broker; ``rng`` draws what a power loss keeps, ``clock`` (seconds) dates
    modifications (getmtime). ``mount``: where the disk is mounted, a directory that is there, with its ancestors,
    before anything is written; only what is made under it is journalled, so what a power loss keeps does not depend
    on how deep the run's scratch folder lies (seed 7856 kept other bytes under ``kactor sim``'s folder than under
    run_seed's own, one mkdir more in the journal)."""

    def __init__(self, rng: random.Random, clock: Callable[[], float] = lambda: 0.0, mount: str = "/") -> None:
        self.rng = rng
        self.clock = clock
        self.mount = os.path.normpath(mount)
        self.files: dict[str, _Inode] = {}
        self.dirs: set[str] = _ancestors(self.mount)
        self._durable_files: dict[str, _Inode] = {}
        self._durable_dirs: set[str] = set(self.dirs)
        self._journal: list[_Op] = []
        self._fds: dict[int, _Fd] = {}
        self._next_fd = 3
        self.failed: list[str] = []
        self.power_losses = 0

    # ------------------------------------------------------------------------------------------------ faults

    def fail_dir(self, path: str) -> None:
        """Every later call under ``path`` raises EIO."""
        self.failed.append(os.path.normpath(path))

    def power_loss(self) -> DiskChange:
        """The machine loses power: open descriptors go, and the disk keeps what a reboot finds (module doc).
        Returns what it kept, each file as a prefix of what a path held just before plus its torn tail."""
        rng = self.rng
        before = (len(self.files), sum(len(i.data) for i in self.files.values()))
        where = {id(inode): path for path, inode in self.files.items()}  # an inode's path just before
        self.power_losses += 1
        self._fds.clear()
        files, dirs = dict(self._durable_files), set(self._durable_dirs)
        for op in self._journal[:rng.randint(0, len(self._journal))]:
            _apply(files, dirs, op)
        torn: dict[int, tuple[_Inode, int]] = {}
        survived: dict[str, _Inode] = {}
        kept_files = []
        for path in sorted(files):
            inode = files[path]
            kept = torn.get(id(inode))
            if kept is None:
                kept = torn[id(inode)] = self._tear(inode)
            out, prefix = kept
            survived[path] = out
            source = where.get(id(inode))
            if source is None:
                prefix = 0  # its bytes are not on the disk before under any name: all of them are the tail
            kept_files.append(KeptFile(path, source, prefix, bytes(out.data[prefix:])))
        self.files, self.dirs = survived, dirs
        self._commit()
        return DiskChange(False, tuple(kept_files), tuple(sorted(dirs)), before[0] - len(survived),
                          before[1] - sum(len(i.data) for i in survived.values()))

    def _tear(self, inode: _Inode) -> tuple[_Inode, int]:
        """The inode as the power loss leaves it, and how many of its first bytes are the inode's data before."""
        rng = self.rng
        data, synced = bytes(inode.data), inode.synced or b""
        if data[:len(synced)] == synced:
            extra = len(data) - len(synced)
            kept = prefix = data[:len(synced) + rng.randint(0, extra)]
            if len(kept) < len(data) and rng.random() < 0.25:
                kept += bytes(rng.randint(1, len(data) - len(kept)))
            shared = len(prefix)
        else:
            common = 0
            while common < min(len(data), len(synced)) and data[common] == synced[common]:
                common += 1
            if rng.random() < 0.5:
                kept, shared = synced, common
            else:
                kept = data[:rng.randint(common, len(data))]
                shared = len(kept)
        out = _Inode(inode.mtime)
        out.data[:] = kept
        out.synced = kept
        return out, shared

    def _commit(self) -> None:
        """The journal reaches the disk (any fsync): the namespace as it is now survives a power loss."""
        if self._journal:
            self._durable_files, self._durable_dirs = dict(self.files), set(self.dirs)
            self._journal.clear()

    def _check(self, path: str) -> None:
        for top in self.failed:
            if _under(path, top):
                raise _error(errno.EIO, path)

    def _change(self, op: _Op) -> None:
        self._journal.append(op)
        _apply(self.files, self.dirs, op)

    def _parent_exists(self, path: str) -> None:
        if os.path.dirname(path) not in self.dirs:
            raise _error(errno.ENOENT, path)

    def _fd(self, fd: int) -> _Fd:
        f = self._fds.get(fd)
        if f is None:
            raise _error(errno.EBADF, str(fd))
        if self.failed:
            self._check(f.path)
        return f

    # ------------------------------------------------------------------------------------------------ descriptors

    def open(self, path: str, flags: int, mode: int = 0o777) -> int:
        if self.failed:
            self._check(path)
        inode = self.files.get(path)
        if inode is not None and not flags & _O_CREAT_OR_TRUNC:  # an existing file opened as it is (most opens)
            return self._new_fd(_Fd(inode, path, bool(flags & os.O_APPEND), flags & 3 != os.O_RDONLY))
        writable = flags & 3 != os.O_RDONLY
        if inode is None:
            if path in self.dirs:
                if writable:
                    raise _error(errno.EISDIR, path)
                return self._new_fd(_Fd(None, path, False, False))
            if not flags & os.O_CREAT:
                raise _error(errno.ENOENT, path)
            self._parent_exists(path)
            inode = _Inode(self.clock())
            self._change(("link", path, inode))
        elif flags & os.O_CREAT and flags & os.O_EXCL:
            raise _error(errno.EEXIST, path)
        elif flags & os.O_TRUNC and writable:
            del inode.data[:]
            inode.mtime = self.clock()
        return self._new_fd(_Fd(inode, path, bool(flags & os.O_APPEND), writable))

    def _new_fd(self, f: _Fd) -> int:
        fd = self._next_fd
        self._next_fd += 1
        self._fds[fd] = f
        return fd

    def close(self, fd: int) -> None:
        if self._fds.pop(fd, None) is None:
            raise _error(errno.EBADF, str(fd))

    def _inode(self, f: _Fd) -> _Inode:
        if f.inode is None:
            raise _error(errno.EISDIR, f.path)
        return f.inode

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        f = self._fd(fd)
        inode = self._inode(f)
        if not f.writable:
            raise _error(errno.EBADF, f.path)
        position = len(inode.data) if f.append else f.position
        self._write_at(inode, data, position)
        f.position = position + len(data)
        return len(data)

    def _write_at(self, inode: _Inode, data: bytes | bytearray | memoryview, position: int) -> None:
        buf = inode.data
        if position > len(buf):
            buf.extend(bytes(position - len(buf)))
        buf[position:position + len(data)] = data
        inode.mtime = self.clock()

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        f = self._fds.get(fd)
        if f is not None and f.inode is not None and not self.failed:  # (`_inode(_fd(fd))`, which raises, inline)
            return bytes(f.inode.data[offset:offset + size])
        return bytes(self._inode(self._fd(fd)).data[offset:offset + size])

    def pwrite(self, fd: int, data: bytes | bytearray | memoryview, offset: int) -> int:
        f = self._fd(fd)
        self._write_at(self._inode(f), data, offset)
        return len(data)

    def ftruncate(self, fd: int, length: int) -> None:
        self._resize(self._inode(self._fd(fd)), length)

    def _resize(self, inode: _Inode, length: int) -> None:
        if length < len(inode.data):
            del inode.data[length:]
        else:
            inode.data.extend(bytes(length - len(inode.data)))
        inode.mtime = self.clock()

    def fsync(self, fd: int) -> None:
        f = self._fd(fd)
        if f.inode is not None:
            f.inode.synced = bytes(f.inode.data)
        self._commit()

    # ------------------------------------------------------------------------------------------------ paths

    def _file(self, path: str) -> _Inode:
        self._check(path)
        inode = self.files.get(path)
        if inode is None:
            raise _error(errno.EISDIR if path in self.dirs else errno.ENOENT, path)
        return inode

    def truncate(self, path: str, length: int) -> None:
        self._resize(self._file(path), length)

    def unlink(self, path: str) -> None:
        self._file(path)
        self._change(("unlink", path))

    def replace(self, src: str, dst: str) -> None:
        self._check(src)
        self._check(dst)
        if src not in self.files:
            raise _error(errno.ENOENT, src)
        if dst in self.dirs:
            raise _error(errno.EISDIR, dst)
        self._parent_exists(dst)
        self._change(("rename", src, dst))

    def rename(self, src: str, dst: str) -> None:
        self._check(src)
        self._check(dst)
        if src in self.files:
            self.replace(src, dst)
            return
        if src not in self.dirs:
            raise _error(errno.ENOENT, src)
        if dst in self.files or any(_under(p, dst) for p in self.files) or dst in self.dirs:
            raise _error(errno.EEXIST, dst)
        self._parent_exists(dst)
        self._change(("rename", src, dst))

    def listdir(self, path: str) -> list[str]:
        self._check(path)
        if path not in self.dirs:
            raise _error(errno.ENOTDIR if path in self.files else errno.ENOENT, path)
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):] for p in self.files if p.startswith(prefix) and "/" not in p[len(prefix):]}
        names.update(d[len(prefix):] for d in self.dirs if d.startswith(prefix) and d != path
                     and "/" not in d[len(prefix):])
        return sorted(names)

    def mkdir(self, path: str) -> None:
        self._check(path)
        if path in self.dirs or path in self.files:
            raise _error(errno.EEXIST, path)
        self._parent_exists(path)
        self._change(("mkdir", path))

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        path = os.path.normpath(path)
        self._check(path)
        if path in self.dirs:
            if not exist_ok:
                raise _error(errno.EEXIST, path)
            return
        parent = os.path.dirname(path)
        if parent not in self.dirs:
            self.makedirs(parent, exist_ok=True)
        self.mkdir(path)

    def getsize(self, path: str) -> int:
        if path in self.dirs:
            self._check(path)
            return 4096
        return len(self._file(path).data)

    def getmtime(self, path: str) -> float:
        return self._file(path).mtime

    def utime(self, path: str, times: tuple[float, float]) -> None:
        self._file(path).mtime = times[1]

    def exists(self, path: str) -> bool:
        if any(_under(path, top) for top in self.failed):
            return False
        return path in self.files or path in self.dirs

    def isdir(self, path: str) -> bool:
        if any(_under(path, top) for top in self.failed):
            return False
        return path in self.dirs

    # ------------------------------------------------------------------------------------------------ whole files

    def read_file(self, path: str) -> bytes:
        return bytes(self._file(path).data)

    def reader(self, path: str) -> io.BytesIO:
        return io.BytesIO(self.read_file(path))

    def write_file(self, path: str, data: bytes, fsync: bool = False) -> None:
        fd = self.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            self.write(fd, data)
            if fsync:
                self.fsync(fd)
        finally:
            self.close(fd)

    def append_file(self, path: str, data: bytes) -> None:
        fd = self.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            self.write(fd, data)
        finally:
            self.close(fd)

    def fsync_path(self, path: str) -> None:
        fd = self.open(path, os.O_RDONLY)
        try:
            self.fsync(fd)
        finally:
            self.close(fd)

    def rmtree(self, path: str) -> None:
        """shutil.rmtree(ignore_errors=True): whatever can be removed goes, deepest first."""
        if any(_under(path, top) for top in self.failed) or path not in self.dirs:
            return
        for file in sorted(p for p in self.files if _under(p, path)):
            self._change(("unlink", file))
        for d in sorted((d for d in self.dirs if _under(d, path)), key=len, reverse=True):
            self._change(("rmdir", d))

    # ------------------------------------------------------------------------------------------------ inspection
