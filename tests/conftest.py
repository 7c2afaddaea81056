"""Shared fixtures: one real ZooKeeper per test session, a fresh chroot per test, a kazoo client bound to it, and a
small real trace recorded once per session."""

from __future__ import annotations

import faulthandler
import glob
import os
from collections.abc import Iterator
from pathlib import Path

import freezegun
import pytest
from kazoo.client import KazooClient

from kactor import cluster as cluster_module
from tests.support.kazoo_clients import kazoo_client, new_chroot
from zk_bridge import server as zk_server_module
from zk_bridge.server import EmbeddedZooKeeper, ZooKeeperUnavailable, check_prerequisites

# pytest times each test phase with _pytest.timing's clocks: a test that freezes time with freezegun would otherwise
# report a setup of years in --durations (the list scripts/test prints)
freezegun.configure(extend_ignore_list=["_pytest.timing"])

# -- markers made true -------------------------------------------------------------------------------------------------
# `scripts/test --quick` runs ``-m "not cluster and not spark"``: a test that starts a ZooKeeper, a broker or a Spark
# session must carry its marker, or the inner loop starts servers it promised not to. Markers follow the fixtures a
# test needs (its whole fixture closure), and a test that starts a server without them fails (`_guard_servers`).
SERVER_FIXTURES = frozenset({"zk_server", "start_cluster", "_shared_cluster", "recorded_trace"})
SPARK_FIXTURES = frozenset({"spark"})
# session-wide fixtures that are costly to start (a cluster, a SparkSession): under pytest-xdist's --dist loadgroup
# every test needing one runs on the same worker, so each starts once per run, not once per worker
EXPENSIVE_GROUPS = ("shared_cluster", "recorded_trace", "spark")


def marks_for(path: str, fixturenames: frozenset[str] | set[str]) -> set[str]:
    """The markers a test at ``path`` (relative to tests/) needing ``fixturenames`` must carry."""
    marks = set()
    parts = Path(path).parts
    if (parts and parts[0] == "cluster") or fixturenames & SERVER_FIXTURES:
        marks.add("cluster")
    if (parts and parts[0] == "spark") or fixturenames & SPARK_FIXTURES:
        marks.add("spark")
    return marks


@pytest.hookimpl(tryfirst=True)  # before -m deselects (mark plugin) and before xdist reads xdist_group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    apply_marks(items, Path(__file__).parent)


def apply_marks(items: list[pytest.Item], tests_dir: Path) -> None:
    """Each item's `marks_for` markers, and the xdist group of the costly session fixture it needs."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        try:
            rel = str(Path(item.path).relative_to(tests_dir))
        except ValueError:
            continue
        have = {m.name for m in item.iter_markers()}
        for name in sorted(marks_for(rel, names) - have):
            item.add_marker(name)
        # the tests sharing the session's SparkSession (about 1 GB) run on one worker; a Spark test that starts its own
        # JVMs (the standalone cluster, the CLI's summarize) runs on either, beside them
        group = next((g for g in EXPENSIVE_GROUPS if g in names), None)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


_SERVERS_ALLOWED: list[bool] = [True]  # outside a test (collection, session fixtures' teardown) nothing is checked


def _guard_servers() -> None:
    if not _SERVERS_ALLOWED[0]:
        pytest.fail("this test starts a ZooKeeper or a broker but is not marked cluster: add "
                    "pytestmark = pytest.mark.cluster (scripts/test --quick leaves cluster tests out)", pytrace=False)


def _guarded(method):  # noqa: ANN001, ANN202
    def start(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        _guard_servers()
        return method(*args, **kwargs)
    start.__wrapped__ = method
    return start


# the one spawn of a ZooKeeper JVM (EmbeddedZooKeeper alone and each server of an ensemble) and of a broker process
# (LocalCluster): checked at the spawn itself, so a test of a refusal before it (no java, a port in use) needs no mark
zk_server_module.spawn = _guarded(zk_server_module.spawn)
cluster_module.spawn = _guarded(cluster_module.spawn)


# -- a test that hangs ends the run, not CI's clock --------------------------------------------------------------------
# pytest-timeout (pyproject's timeout) fails a test with one SIGALRM: a teardown that then hangs (a cluster that will
# not stop), or a thread stuck in C where no signal reaches Python, would hang the worker for good, and pytest-xdist
# (3.8) also hangs when it replaces a crashed worker under --dist loadgroup (pytest-xdist issues 1323, 1327). So past
# pytest-timeout's limit and a grace, faulthandler's C thread writes every thread's stack to the terminal and ends the
# process; xdist names the test the worker died in, and scripts/test's --max-worker-restart 0 ends the run there.
_BACKSTOP_FD: list[int] = []  # the terminal's stderr, duplicated before capture could redirect fd 2 for a test


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kactor_backstop_grace_s", "seconds past a test's pytest-timeout limit before its process is "
                  "ended with every thread's stack (tests/conftest.py)", default="120")


def pytest_configure(config: pytest.Config) -> None:
    _BACKSTOP_FD.append(os.dup(2))


def _backstop_s(item: pytest.Item) -> float:
    """pytest-timeout's limit for this test (its mark, else ``--timeout``, else the ini's) plus the grace; 0, no
    backstop, where that limit is off, a debugger may hold the test (``--pdb``) or there is no terminal to write to."""
    config = item.config
    if config.getoption("usepdb", False):
        return 0.0
    if not _BACKSTOP_FD:
        return 0.0
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        limit = marker.args[0]
    else:
        limit = config.getoption("timeout", None)
        if limit is None:
            limit = config.getini("timeout")
    limit = float(limit or 0)
    return limit + float(config.getini("kactor_backstop_grace_s")) if limit > 0 else 0.0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _SERVERS_ALLOWED[0] = item.get_closest_marker("cluster") is not None
    backstop = _backstop_s(item)
    if backstop:
        faulthandler.dump_traceback_later(backstop, exit=True, file=_BACKSTOP_FD[0])
    try:
        yield
    finally:
        if backstop:
            faulthandler.cancel_dump_traceback_later()
        _SERVERS_ALLOWED[0] = True


# -- parallel workers (pytest-xdist) ---------------------------------------------------------------------------------
def _worker() -> tuple[int, int]:
    """(this xdist worker's index, how many workers); (0, 1) without xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return (int(name[2:]) if name.startswith("gw") else 0), max(count, 1)


class _WorkerPorts(set):
    """free_port's "handed out before" set, which also holds every port of the other workers' share: workers probe
    the same OS port range at once, and a port one probed and closed could be handed to the other before its broker
    bound it. The share is ``(port // 2) % workers``: even for free_port's random draws, and for bind(0), where
    free_port falls back to it, which Linux answers with mostly even ports."""

    def __init__(self, index: int, count: int) -> None:
        super().__init__()
        self.index, self.count = index, count

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int) \
                and (key[1] // 2) % self.count != self.index:
            return True
        return super().__contains__(key)


_INDEX, _COUNT = _worker()
if _COUNT > 1:
    zk_server_module._handed_out = _WorkerPorts(_INDEX, _COUNT)


# tickTime 200 ms lets the server grant sessions of 0.4–4 s, so expiry tests run in well under a second.
TEST_TICK_MS = 200


@pytest.fixture(scope="session")
def zk_server() -> Iterator[EmbeddedZooKeeper]:
    """A real standalone ZooKeeper on a free loopback port, in a temp dir, stopped at the end of the session."""
    try:
        check_prerequisites()
        server = EmbeddedZooKeeper(tick_ms=TEST_TICK_MS).start(timeout=60)
    except ZooKeeperUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        _stop_leaked_clients(server.connect_string)
        server.stop()


def _stop_leaked_clients(connect_string: str) -> None:
    """Stop kazoo clients of this server that a test left running: once the server is gone they would retry (and
    log "Connection refused") until the interpreter exits. Named, so the leak can be found and fixed."""
    import gc
    import sys

    host = connect_string.split("/")[0]
    leaked = [o for o in gc.get_objects() if isinstance(o, KazooClient) and not o._stopped.is_set()
              and any(f"{h}:{p}" == host for h, p in o.hosts)]  # kazoo has no public "started?" flag
    for client in leaked:
        client.stop()
        client.close()
    if leaked:
        print(f"\nconftest: stopped {len(leaked)} kazoo client(s) left running: "
              f"{sorted(str(c.chroot or '/') for c in leaked)}", file=sys.stderr)


@pytest.fixture
def zk_chroot(zk_server: EmbeddedZooKeeper) -> str:
    """A connect string ``127.0.0.1:PORT/t-<uuid>`` whose chroot exists and is this test's alone."""
    return new_chroot(zk_server.connect_string)


@pytest.fixture
def zk(zk_chroot: str) -> Iterator[KazooClient]:
    """A started KazooClient bound to this test's chroot; stopped and closed after the test."""
    with kazoo_client(zk_chroot) as client:
        yield client


@pytest.fixture(scope="session")
def recorded_trace(zk_server: EmbeddedZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A small real trace, recorded once per session (tests/trace, tests/messages): the path of broker-0.jsonl of a
    one-broker run (controller and replica manager together) on the session's ZooKeeper that created topics ``t``
    (3 partitions) and demo-doomed, then stopped (controlled shutdown)."""
    from kactor.cluster import LocalCluster
    from kactor.demo import Scenario

    connect = new_chroot(zk_server.connect_string, "trace")
    base: Path = tmp_path_factory.mktemp("trace-cluster")
    trace_dir = str(base / "traces")
    lc = LocalCluster(1, zookeeper=connect, base_dir=str(base / "data"),
                      trace_dir=trace_dir, overrides=["zookeeper.session.timeout.ms=4000"])
    sc = Scenario(lc, topic="t", partitions=3, say=lambda _: None)
    try:
        lc.start()
        sc.start()
        sc.create()
    finally:
        sc.close()
        lc.stop()
    files = glob.glob(os.path.join(trace_dir, "*.jsonl"))
    assert [os.path.basename(f) for f in files] == ["broker-0.jsonl"], files
    yield files[0]
