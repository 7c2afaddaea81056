"""The cluster and spark markers are true, so `scripts/test --quick` (-m "not cluster and not spark") starts no server.

tests/conftest.py marks a test by what it needs (its whole fixture closure: the session's ZooKeeper, a cluster, the
recorded trace, the SparkSession) and by its folder (tests/cluster, tests/spark); a test that spawns a ZooKeeper JVM
or a broker process without the cluster marker fails at the spawn. This file's tests carry no marker, so they run
under that check themselves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kactor.cluster import LocalCluster
from tests.conftest import marks_for
from zk_bridge.server import EmbeddedZooKeeper

REPO = Path(__file__).resolve().parents[1]


def test_an_unmarked_test_that_starts_a_zookeeper_fails_at_the_spawn() -> None:
    zk = EmbeddedZooKeeper(tick_ms=200)
    try:
        with pytest.raises(pytest.fail.Exception, match="not marked cluster"):
            zk.start(timeout=5)
        assert zk.proc is None  # no JVM was started
    finally:
        if zk.work_dir:
            shutil.rmtree(zk.work_dir, ignore_errors=True)


def test_an_unmarked_test_that_starts_a_broker_fails_at_the_spawn(tmp_path: Path) -> None:
    lc = LocalCluster(1, zookeeper="127.0.0.1:1/unreachable", base_dir=str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="not marked cluster"):
        lc.start_broker(0)
    assert lc.procs == {}


@pytest.mark.parametrize(("path", "fixtures", "marks"), [
    ("admin/test_admin_cli_topics.py", {"zk", "zk_chroot", "zk_server", "tmp_path"}, {"cluster"}),
    ("trace/test_trace_replay.py", {"recorded_trace", "zk_server", "tmp_path_factory"}, {"cluster"}),
    ("cluster/test_cluster_foundation.py", {"tmp_path"}, {"cluster"}),  # a conftest's pytestmark reaches no test
    ("spark/test_spark_generate.py", {"tmp_path"}, {"spark"}),
    ("spark/test_spark_cluster_trace.py", {"spark", "start_cluster", "zk_server"}, {"cluster", "spark"}),
    ("bench/test_bench_settle.py", {"spark"}, {"spark"}),
    ("core/test_something.py", {"tmp_path", "monkeypatch"}, set()),
])
def test_markers_follow_the_fixtures_and_the_folder(path: str, fixtures: set[str], marks: set[str]) -> None:
    assert marks_for(path, fixtures) == marks


def test_this_unmarked_test_is_in_the_quick_selection(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("cluster") is None
    assert request.node.get_closest_marker("spark") is None


def test_a_test_on_the_session_zookeeper_is_deselected_by_quick(tmp_path: Path) -> None:
    """The marking hook at collection, on a tiny suite: an unmarked test needing the session's ZooKeeper (through
    another fixture) is deselected by -m "not cluster and not spark", a plain one is not."""
    (tmp_path / "conftest.py").write_text(
        "import pathlib\n"
        "import pytest\n"
        "from tests.conftest import apply_marks\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    apply_marks(items, pathlib.Path(__file__).parent)\n"
        "@pytest.fixture(scope='session')\n"
        "def zk_server():\n"
        "    return 'zk'\n"
        "@pytest.fixture\n"
        "def zk(zk_server):\n"
        "    return zk_server\n")
    (tmp_path / "test_a.py").write_text("def test_on_zk(zk):\n    pass\n\n\ndef test_plain():\n    pass\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--rootdir", str(tmp_path), "-c", os.devnull,
                           "-m", "not cluster and not spark", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_a.py::test_plain" in proc.stdout and "test_on_zk" not in proc.stdout, proc.stdout
    assert "1/2 tests collected (1 deselected)" in proc.stdout, proc.stdout
