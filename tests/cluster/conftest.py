"""Real-cluster fixtures: broker processes (``python -m kactor broker``) on the session's real ZooKeeper.

Each cluster lives in its own chroot and its own temp folder; its message traces go to a per-test folder under one
session-wide trace root, so `test_zz_trace_replay.py` can replay every trace the cluster tests recorded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cluster_helpers import KILLED_UNDER_LOAD, SHARED_CLUSTERS, TEST_SESSION_TIMEOUT_MS, Cluster, stop_shared_clusters

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot

# (no pytestmark here: a conftest's marks reach no test; tests/conftest.py marks every test in this folder cluster)

_TRACE_ROOT: list[Path] = []


# scripts/test runs the cluster tests on pytest-xdist workers, then test_zz_trace_replay alone in a second pytest:
# every worker's traces go under this one folder (the workers' tmp_path_factory folders are each their own)
TRACE_ROOT_ENV = "KACTOR_TEST_TRACE_ROOT"
# each worker's folders end in its name, so two workers' tests of the same name never write the same folder
_WORKER_SUFFIX = f"-{os.environ['PYTEST_XDIST_WORKER']}" if os.environ.get("PYTEST_XDIST_WORKER") else ""


@pytest.fixture(scope="session")
def cluster_trace_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get(TRACE_ROOT_ENV)
    if given:
        root = Path(given)
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = tmp_path_factory.mktemp("cluster-traces")
    _TRACE_ROOT.append(root)
    return root


@pytest.fixture
def start_cluster(request: pytest.FixtureRequest, zk_chroot: str, tmp_path: Path,
                  cluster_trace_root: Path) -> Iterator[Callable[..., Cluster]]:
    """start_cluster(brokers=3, overrides=(...), start=True) → a started `Cluster` (stopped after the test).

    Brokers get zookeeper.session.timeout.ms=4000 (the test server's maximum) and a 200 ms controlled-shutdown
    retry backoff unless an override says otherwise.
    """
    made: list[Cluster] = []
    test_name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)

    def start(brokers: int = 3, overrides: tuple[str, ...] | list[str] = (), start: bool = True,
              killed_under_load: bool = False) -> Cluster:
        # The last broker standing can never hand its leaderships off, so its controlled shutdown fails and retries
        # (Kafka's behaviour too): a short backoff keeps every test's teardown short.
        defaults = [f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                    "controlled.shutdown.retry.backoff.ms=200"]
        trace_dir = cluster_trace_root / f"{test_name}-{len(made)}{_WORKER_SUFFIX}"
        if killed_under_load:
            # A SIGKILL loses the last second of the killed broker's trace; with a client writing through the kill,
            # records were appended in that second, so the next incarnation's log dirs (rebuilt by the replay from
            # this trace) cannot be the real ones. test_zz_trace_replay replays such a broker's incarnations up to
            # the kill only.
            trace_dir.mkdir(parents=True, exist_ok=True)
            (trace_dir / KILLED_UNDER_LOAD).write_text("incarnations after the first are not replayed\n")
        lc = LocalCluster(brokers, zookeeper=zk_chroot, base_dir=str(tmp_path / f"cluster-{len(made)}"),
                          trace_dir=str(trace_dir), overrides=[*defaults, *overrides])
        cluster = Cluster(lc)
        made.append(cluster)
        if start:
            cluster.start()
        return cluster

    try:
        yield start
    finally:
        for cluster in made:
            cluster.stop(concurrent=True)  # a test's cluster needs no rolling stop: the non-controllers together


# What the tests on the shared cluster need of it, together (each file's own overrides were a subset of these).
SHARED_OVERRIDES = (f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                    "controlled.shutdown.retry.backoff.ms=200",
                    "offsets.topic.num.partitions=3",  # kafka_clients_helpers.OVERRIDES: a group coordinator in ~1 s
                    "group.initial.rebalance.delay.ms=0",
                    "auto.leader.rebalance.enable=false")  # leaders move only when a test moves them


SHARED = "shared_cluster"


@pytest.fixture(scope="session")
def _shared_cluster(zk_server, tmp_path_factory: pytest.TempPathFactory,  # noqa: ANN001
                    cluster_trace_root: Path) -> Iterator[Cluster]:
    lc = LocalCluster(3, zookeeper=new_chroot(zk_server.connect_string),
                      base_dir=str(tmp_path_factory.mktemp("shared-cluster")),
                      trace_dir=str(cluster_trace_root / f"shared-0{_WORKER_SUFFIX}"), overrides=list(SHARED_OVERRIDES))
    c = Cluster(lc)
    SHARED_CLUSTERS.append(c)
    try:
        yield c
    finally:
        c.stop()  # a no-op once stopped


@pytest.fixture
def shared_cluster(_shared_cluster: Cluster) -> Cluster:
    """One 3-broker cluster for every test that only needs a healthy cluster: a cluster takes 11-17 s to start on a
    loaded 2-core machine, more than most such tests take.

    A test on it uses topic and group names of its own, leaves every broker running (no kill, restart, SIGSTOP) and
    changes no cluster-wide or broker config; what it asserts holds whatever the tests before it created (it never
    expects an empty cluster). The tests on it run one after another (pytest_collection_modifyitems below) and the
    cluster stops after the last of them (pytest_runtest_teardown), so its brokers neither idle beside the other
    clusters nor trace that idling; its trace folder (``shared-0``) is replayed by test_zz_trace_replay like any
    other. Stopped, it starts again (the same brokers, a new incarnation each) if a test asks for it once more.
    """
    c = _shared_cluster
    if not any(p.poll() is None for p in c.lc.procs.values()):
        c.start()
    return c


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests on the shared cluster, in their files' order, where the first of them was."""
    shared = [item for item in items if SHARED in getattr(item, "fixturenames", ())]
    if not shared:
        return
    first = items.index(shared[0])
    rest = [item for item in items if SHARED not in getattr(item, "fixturenames", ())]
    items[:] = [*rest[:first], *shared, *rest[first:]]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    if SHARED in getattr(item, "fixturenames", ()) and SHARED not in getattr(nextitem, "fixturenames", ()):
        stop_shared_clusters()
