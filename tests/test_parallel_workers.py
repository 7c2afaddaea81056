"""scripts/test's pytest-xdist workers never hand out the same port: each worker's free_port keeps to its share of
the OS's ports (tests/conftest.py _WorkerPorts), so a port one worker probed and closed is never handed to another
before its broker or ZooKeeper binds it; a group stays on one worker; and a test that hangs past every timeout ends
the run with its name and its stacks instead of hanging it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _WorkerPorts
from zk_bridge import server
from zk_bridge.server import free_port


@pytest.mark.parametrize("index", [0, 1])
def test_each_worker_hands_out_only_its_share_of_ports(monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    monkeypatch.setattr(server, "_handed_out", _WorkerPorts(index, 2))
    ports = [free_port() for _ in range(20)]
    assert all((p // 2) % 2 == index for p in ports), ports
    assert len(set(ports)) == 20  # and never the same port twice, as before


def test_the_two_shares_are_disjoint_and_cover_every_port() -> None:
    shares = [_WorkerPorts(0, 2), _WorkerPorts(1, 2)]
    for port in range(1024, 1100):
        assert [("127.0.0.1", port) in s for s in shares].count(False) == 1, port


def test_one_worker_takes_every_port() -> None:
    assert ("127.0.0.1", 40001) not in _WorkerPorts(0, 1)


def test_under_xdist_this_worker_keeps_to_its_share() -> None:
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if count == 1:
        pytest.skip("not on a pytest-xdist worker")
    index = int(os.environ["PYTEST_XDIST_WORKER"][2:])
    assert isinstance(server._handed_out, _WorkerPorts)
    assert (server._handed_out.index, server._handed_out.count) == (index, count)


GROUPED_TESTS = '''
import os
import subprocess
import sys
from pathlib import Path
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    with open(os.environ["WORKERS_SEEN"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''


def test_loadgroup_keeps_an_xdist_group_on_one_worker(tmp_path: Path) -> None:
    """scripts/test's ``--dist loadgroup`` sends a group's tests to one worker (a module-scoped cluster writing a fixed
    trace folder, the shared cluster, the SparkSession start once): under pytest 9, pytest-xdist 3.8 split each."""
    (tmp_path / "test_grouped.py").write_text(GROUPED_TESTS)
    seen = tmp_path / "workers"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                        "loadgroup", "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path / "test_grouped.py")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "WORKERS_SEEN": str(seen)})
    assert r.returncode == 0, r.stdout + r.stderr
    workers = seen.read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers


HANGING_TESTS = '''
import signal
import time


def test_hangs_where_no_alarm_reaches_it():
    # pytest-timeout's SIGALRM blocked, as for a thread stuck in C or a teardown after its one alarm has fired
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(600)


def test_after_it():
    pass
'''


def test_a_test_that_outlives_its_timeout_ends_the_run_and_is_named(tmp_path: Path) -> None:
    """tests/conftest.py's backstop and scripts/test's ``--max-worker-restart 0``: past pytest-timeout's limit and the
    grace, the worker prints every thread's stack and ends; pytest-xdist names the test it died in and the run ends.
    Without them CI's run at 1813f62 hung to its 90-minute limit: pytest-xdist 3.8 replacing a crashed worker under
    --dist loadgroup waits for good (its issues 1323 and 1327)."""
    (tmp_path / "test_hanging.py").write_text(HANGING_TESTS)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                        "-n", "1", "--dist", "loadgroup", "--max-worker-restart", "0", "-o", "timeout=1",
                        "-o", "kactor_backstop_grace_s=1", "-c", os.devnull, "--rootdir", str(tmp_path),
                        str(tmp_path / "test_hanging.py")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "Timeout (0:00:02)!" in out and "in test_hangs_where_no_alarm_reaches_it" in out, out
    assert "crashed while running 'test_hanging.py::test_hangs_where_no_alarm_reaches_it'" in out, out
    assert "1 failed" in out, out
