"""Issue #22 on a real cluster: 3 brokers on a 3-server ZooKeeper ensemble ride out the crash of the ensemble's
leader while the controller is writing (a topic deletion and a partition reassignment in flight).

Every ZooKeeper client sees the connection drop (followers leave service too while a new leader is elected) and
reconnects to a serving member within the session timeout, so no session expires: requests wait for the reconnection
and are re-sent, watches are re-armed, and nothing runs the session-expiry path — no broker re-registers
(/brokers/ids/* keep their czxid, the broker epoch) and the controller is not re-elected (/controller_epoch and
/controller unchanged).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import Cluster, topic_dirs
from kazoo.client import KazooClient

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import kazoo_client

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

BROKERS = (0, 1, 2)
PARTITIONS = 16
SESSION_TIMEOUT_MS = 10000


@pytest.fixture
def ensemble_cluster(request: pytest.FixtureRequest, tmp_path: Path, cluster_trace_root: Path) -> Iterator[Cluster]:
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    # tickTime 200 ms for fast elections; maxSessionTimeout raised so brokers still get a 10 s session
    lc = LocalCluster(3, base_dir=str(tmp_path / "cluster"), trace_dir=str(cluster_trace_root / name),
                      overrides=[f"zookeeper.session.timeout.ms={SESSION_TIMEOUT_MS}",
                                 "controlled.shutdown.retry.backoff.ms=200"],
                      zookeeper_ensemble=3, zk_tick_ms=200, zk_max_session_timeout_ms=20000)
    c = Cluster(lc)
    try:
        c.start()
        assert lc.zk is not None
        lc.zk.wait_serving()
        yield c
    finally:
        c.stop()


def _snapshot(zk: KazooClient) -> dict[str, object]:
    """What a session expiry would change: broker registrations (czxid = broker epoch, and the owning session),
    the controller znode and /controller_epoch."""
    out: dict[str, object] = {}
    for b in sorted(zk.get_children("/brokers/ids")):
        st = zk.exists(f"/brokers/ids/{b}")
        out[f"/brokers/ids/{b}"] = (st.czxid, st.ephemeralOwner)
    data, st = zk.get("/controller")
    out["/controller"] = (json.loads(data)["brokerid"], st.czxid, st.ephemeralOwner)
    data, st = zk.get("/controller_epoch")
    out["/controller_epoch"] = (int(data), st.version)
    return out


def test_ensemble_leader_crash_during_deletion_and_reassignment(ensemble_cluster: Cluster) -> None:
    c = ensemble_cluster
    ens = c.lc.zk
    assert ens is not None and len(c.connect_string.split(",")) == 3
    doomed = {p: [0, 1, 2] for p in range(PARTITIONS)}
    moving = {p: [0, 1] for p in range(PARTITIONS)}
    target = {p: [2, 1] for p in range(PARTITIONS)}
    c.create_topic("doomed", assignment=doomed)
    c.create_topic("moving", assignment=moving)
    for p in range(PARTITIONS):
        c.wait_partition("doomed", p, lambda s: len(s["isr"]) == 3, what=f"doomed-{p} ISR of 3")
        c.wait_partition("moving", p, lambda s: sorted(s["isr"]) == [0, 1], what=f"moving-{p} ISR [0, 1]")
    before = _snapshot(c.zk)
    assert before["/controller_epoch"][0] == 1  # type: ignore[index]

    # Both operations are started, then the ensemble's leader is SIGKILLed while they are still in flight.
    # Both znodes are written in one ZooKeeper transaction, as `kactor reassign-partitions --execute` and `kactor
    # topics --delete` write them: two tool processes took ~2 s, enough for an empty partition's reassignment to end.
    plan = {"version": 1, "partitions": [{"topic": "moving", "partition": p, "replicas": r} for p, r in target.items()]}
    leader = ens.leader()
    tx = c.zk.transaction()
    tx.create("/admin/reassign_partitions", json.dumps(plan).encode())
    tx.create("/admin/delete_topics/doomed", b"")
    assert all(r for r in tx.commit())
    in_flight = [c.zk.exists(p) is not None for p in ("/admin/reassign_partitions", "/brokers/topics/doomed")]
    ens.kill(leader)
    assert in_flight == [True, True], "an operation finished before the ZooKeeper leader was killed"
    new_leader = ens.wait_quorum(30)
    assert new_leader != leader

    # Both complete on the remaining two servers.
    c.wait(lambda: c.zk.retry(c.zk.exists, "/admin/reassign_partitions") is None, 60,
           "/admin/reassign_partitions removed")
    c.wait(lambda: not any(c.zk.retry(c.zk.exists, p) for p in ("/brokers/topics/doomed", "/config/topics/doomed",
                                                                  "/admin/delete_topics/doomed")),
           60, "doomed's znodes removed")
    c.wait(lambda: all(topic_dirs(c, b, "doomed") == [] for b in BROKERS), 60, "doomed's log dirs removed")
    assert c.json("/brokers/topics/moving") == {
        "version": 2, "partitions": {str(p): r for p, r in target.items()},
        "adding_replicas": {}, "removing_replicas": {}}
    for p in range(PARTITIONS):
        st = c.wait_partition("moving", p, lambda s: sorted(s["isr"]) == [1, 2], 60, f"moving-{p} ISR [1, 2]")
        assert st["leader"] in (1, 2) and st["controller_epoch"] == 1
    c.wait(lambda: all(topic_dirs(c, 0, "moving") == [] for _ in (0,)), 60, "moving's replicas removed from 0")

    # No session expired: same broker epochs and sessions, same controller, same controller epoch.
    assert _snapshot(c.zk) == before
    assert sorted(c.zk.get_children("/brokers/ids")) == ["0", "1", "2"]

    # The crashed server comes back and follows, with the state written while it was down.
    ens.restart(leader)
    assert ens.servers[leader].mode() == "follower"
    with kazoo_client(ens.servers[leader].connect_string, timeout=5.0) as direct:
        direct.sync("/brokers/topics")
        assert direct.get_children("/brokers/topics") == ["moving"]
