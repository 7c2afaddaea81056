"""The broker process's allocator policy: glibc's mmap and trim thresholds raised once, unless the user set glibc's
own variables or the C library has no mallopt; and in a real process it does what it says (a large buffer freed
and allocated again comes back without a new mapping)."""

from __future__ import annotations

import subprocess
import sys

from edges import malloc_policy


class FakeLibc:
    def __init__(self, answer: int = 1) -> None:
        self.calls: list[tuple[int, int]] = []
        self.answer = answer

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return self.answer


def test_install_raises_the_mmap_and_trim_thresholds():
    libc = FakeLibc()
    assert malloc_policy.install(libc, environ={})
    assert libc.calls == [(-3, 8 << 20), (-1, 32 << 20)]  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD


def test_the_users_malloc_variables_win():
    for variable in malloc_policy.USER_VARIABLES:
        libc = FakeLibc()
        assert not malloc_policy.install(libc, environ={variable: "131072"})
        assert libc.calls == []


def test_a_c_library_without_mallopt_or_refusing_it_changes_nothing():
    assert not malloc_policy.install(object(), environ={})
    assert not malloc_policy.install(FakeLibc(answer=0), environ={})


def test_in_a_process_freed_megabytes_are_reused_without_page_faults():
    """Allocating and freeing 1 MB buffers in turn (a broker's answers): with glibc's defaults each one's pages are
    given back and fault in again (a minor fault per 4 KB page); with the policy, after the first, none do. Counted
    with getrusage's minor faults in a fresh process each."""
    code = """
import resource, sys
from edges import malloc_policy
if sys.argv[1] == "1":
    assert malloc_policy.install()
src = bytes(1 << 20)
for _ in range(3):  # warm up: the heap grows once
    b = bytearray(src); c = bytes(b); del b, c
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    b = bytearray(src); c = bytes(b); del b, c
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    faults = {}
    for installed in ("0", "1"):
        r = subprocess.run([sys.executable, "-c", code, installed], capture_output=True, text=True, check=True)
        faults[installed] = int(r.stdout)
    assert faults["0"] >= 20 * 256  # every 4 KB page of every buffer, at least once
    assert faults["1"] < 64, faults  # reused: (next to) none
