"""The methods attrs generates for kactor's classes, compiled once per checkout instead of once per process.

attrs writes each class's ``__init__``, ``__eq__``, ``__repr__``, ``__hash__``... as source text and compiles it
(``attr._make._compile_and_eval``). A broker defines ~450 such classes at start-up: 449 ``compile`` calls, a quarter
of its import time (0.21 of 0.82 s), and every broker, command and simulator worker a suite or a cluster starts
paid it again. Python caches a module's bytecode in ``__pycache__``; this does the same for attrs' generated code:
``install()`` (called by `kactor` before any class is defined) wraps ``_compile_and_eval`` so that a script already
compiled by an earlier process is taken from ``kactor/__pycache__/attrs-code.<cache tag>.attrs-<version>.marshal``.

The key is the script's text and its file name (both in the code object), so a changed class compiles afresh; the
file is per interpreter (marshal's format is) and per attrs version. New code objects are added to the file when the
process exits (merged with what other processes wrote meanwhile, written to a temporary file and renamed, so a reader
never sees half a file); a process that is killed adds nothing. An unreadable file or entry is treated as missing.
Under ``PYTHONDONTWRITEBYTECODE`` (as on this project's machines) processes only read it, as they read the ``.pyc``
files scripts/setup compiles; the same step writes this file (`main`: every module of the project imported once).
Nothing is written where the folder is read-only (an installed copy); ``KACTOR_ATTRS_CODE_CACHE`` names another
folder, or is ``0`` to turn the cache off. Measured (callgrind, importing every module a broker imports,
PYTHONHASHSEED=0): 2,649 M instructions without the cache, 1,943 M with it. tests/kactor/test_attrs_code_cache.py
holds the classes alike either way.
"""

from __future__ import annotations

import atexit
import hashlib
import marshal
import os
import sys
from types import CodeType
from typing import Any

ENV = "KACTOR_ATTRS_CODE_CACHE"
# A bound on the file, which every process loads whole (its entries are bytes, unmarshalled one by one when used):
# scripts/setup writes ~520 scripts (~2.4 KB each), and processes that may write add their own (a test suite run added
# ~420). A file past the bound is started again from what the writing process compiled.
MAX_ENTRIES = 4_000


class AttrsCodeCache:
    """The code objects of one cache file, loaded when first needed; what this process compiled, saved at exit."""

    def __init__(self, path: str) -> None:
        self.path = path
        # each code object marshalled on its own, so that a process unmarshals only the classes it defines (a
        # broker ~420 of the file's ~520; unmarshalling all of them took a third of what the cache saved)
        self.codes: dict[bytes, bytes] | None = None
        self.new: dict[bytes, bytes] = {}
        self.used: set[bytes] = set()
        self.hits = 0

    @staticmethod
    def key(script: str, filename: str) -> bytes:
        return hashlib.sha1(f"{filename}\0{script}".encode(), usedforsecurity=False).digest()

    def _read(self) -> dict[bytes, bytes]:
        try:
            with open(self.path, "rb") as f:
                loaded = marshal.load(f)
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not isinstance(loaded, dict) or not all(isinstance(c, bytes) for c in loaded.values()):
            return {}
        return loaded

    def compile(self, script: str, filename: str) -> CodeType:
        """``compile(script, filename, "exec")``, from the file when an earlier process compiled it."""
        if self.codes is None:
            self.codes = self._read()
        k = self.key(script, filename)
        self.used.add(k)
        data = self.codes.get(k)
        if data is not None:
            try:
                code = marshal.loads(data)
            except (EOFError, ValueError, TypeError):
                code = None
            if isinstance(code, CodeType):
                self.hits += 1
                return code
        code = compile(script, filename, "exec")
        self.codes[k] = self.new[k] = marshal.dumps(code)
        return code

    def save(self, fresh: bool = False) -> None:
        """Add this process's new code objects to the file (what other processes wrote meanwhile kept); ``fresh``:
        write only what this process used, dropping the entries of classes since changed."""
        if fresh:
            assert self.codes is not None
            merged = {k: self.codes[k] for k in self.used}
        elif not self.new:
            return
        else:
            merged = self._read()
            if len(merged) + len(self.new) > MAX_ENTRIES:
                merged = {}
            merged.update(self.new)
        import tempfile  # only a writing process needs it

        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".attrs-code-", dir=folder)
            try:
                with os.fdopen(fd, "wb") as f:
                    marshal.dump(merged, f)
                os.chmod(tmp, 0o644)  # as a .pyc: readable by whoever runs this checkout
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return  # a read-only install: every process compiles, as without the cache
        self.new = {}


_installed: list[AttrsCodeCache] = []


def cache_path(folder: str | None = None) -> str:
    import attr

    tag = sys.implementation.cache_tag or "python"
    folder = folder or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    return os.path.join(folder, f"attrs-code.{tag}.attrs-{attr.__version__}.marshal")


def install(folder: str | None = None, write: bool | None = None) -> AttrsCodeCache | None:
    """Wrap attrs' compile step with the cache (once per process); None where it is off. ``write``: add what this
    process compiled to the file at exit (default: unless PYTHONDONTWRITEBYTECODE)."""
    if _installed:
        return _installed[0]
    setting = os.environ.get(ENV, "")
    if setting == "0":
        return None
    folder = folder or setting or None
    from attr import _make

    cache = AttrsCodeCache(cache_path(folder))

    def _compile_and_eval(script: str, globs: dict[str, Any] | None, locs: Any = None,
                          filename: str = "") -> None:
        eval(cache.compile(script, filename), globs, locs)  # noqa: S307 - attrs' own step, its own generated code

    _make._compile_and_eval = _compile_and_eval
    if write if write is not None else not sys.flags.dont_write_bytecode:
        atexit.register(cache.save)
    _installed.append(cache)
    return cache


PACKAGES = ("actors", "bench", "core", "edges", "kactor", "messages", "protocol", "sim", "spark", "zk_bridge")


def warm(root: str) -> int:
    """Import every module of the project's packages under ``root`` (not ``__main__``s), so that the cache holds
    every class's methods; returns how many imported. A module that cannot be imported here is left out."""
    import importlib
    import pkgutil

    done = 0
    for package in PACKAGES:
        if not os.path.isfile(os.path.join(root, package, "__init__.py")):
            continue
        for info in pkgutil.walk_packages([os.path.join(root, package)], prefix=f"{package}."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                importlib.import_module(info.name)
                done += 1
            except Exception:  # noqa: BLE001, S112 - an optional dependency missing: that module's classes compile later
                continue
    return done


def main() -> int:
    """scripts/setup's step: fill the file from a fresh import of every module, and say how much it holds."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cache = install(write=True)
    if cache is None:
        print(f"attrs code cache: off ({ENV}=0)")
        return 0
    modules = warm(root)
    compiled = len(cache.new)
    if cache.codes is not None:
        cache.save(fresh=True)
    print(f"attrs code cache: {modules} modules imported, {compiled} scripts compiled, {cache.hits} from the file: "
          f"{cache.path}")
    return 0

