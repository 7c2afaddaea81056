"""`kactor chaos`'s operator slips (kactor/chaos/slips.py, issue #39) against a real broker: a second `kactor broker`
started on a live broker's log dir — its own command again, or another broker id — is refused as Kafka 2.6.3
refuses it (the dir's lock; the stored broker.id), never registers, and the live broker keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_helpers import Cluster

from kactor.chaos.runner import ChaosConfig, ChaosRun
from kactor.chaos.schedule import Step

pytestmark = pytest.mark.cluster


@pytest.mark.parametrize("kind", ["second-process", "other-dir"])
def test_a_second_broker_process_on_a_live_brokers_dir_is_refused(start_cluster, tmp_path: Path, kind: str) -> None:
    cluster: Cluster = start_cluster(brokers=1)
    run = ChaosRun(ChaosConfig(seed=0, steps=1, brokers=1), str(tmp_path / "seed"))
    run.cluster, run.zk = cluster.lc, cluster.zk
    registration = cluster.zk.get("/brokers/ids/0")[0]
    run._slip(Step(0, "create", "t0", (1, 1), slip=kind, slip_target=0))
    assert run.slip_violations == []
    assert run.slips == {kind: 1} and run.faults == {}
    assert cluster.zk.get_children("/brokers/ids") == ["0"]
    assert cluster.zk.get("/brokers/ids/0")[0] == registration  # the live broker's own registration, untouched
    assert cluster.lc.procs[0].poll() is None
    out = next(Path(cluster.lc.base_dir).glob(f"slip-0-{kind}-broker-0.log")).read_text()
    expected = ("Failed to acquire lock on file .lock in " if kind == "second-process"
                else "Configured broker.id 100 doesn't match stored broker.id 0 in meta.properties")
    assert expected in out
    # the live broker serves: a topic created now is led by it
    from zk_bridge.admin.admin_zk import AdminZkClient
    AdminZkClient(cluster.zk).create_topic("after-slip", 1, 1)
    cluster.wait(lambda: cluster.zk.exists("/brokers/topics/after-slip/partitions/0/state") is not None, 30.0,
                 "the new topic led")


def test_the_hostile_client_gets_kafkas_answers_from_a_real_broker(start_cluster, tmp_path: Path) -> None:
    """kactor/chaos/hostile.py: AddPartitionsToTxn of the internal topics 29, EndTxn 48, a produce to them 17, a
    wrong CRC 2, garbage 87 — each as 2.6.3 answers it, so the run holds nothing against the broker."""
    from zk_bridge.admin.admin_zk import AdminZkClient

    cluster: Cluster = start_cluster(brokers=1)
    AdminZkClient(cluster.zk).create_topic("t0", 1, 1)
    cluster.wait(lambda: cluster.zk.exists("/brokers/topics/t0/partitions/0/state") is not None, 30.0, "t0 led")
    run = ChaosRun(ChaosConfig(seed=3, steps=1, brokers=1), str(tmp_path / "seed"))
    run.cluster, run.zk = cluster.lc, cluster.zk
    run.live_topics = {"t0": 1}
    run._hostile()
    assert run.hostile_violations == []
    assert run.hostile_notes == [
        "AddPartitionsToTxn of __transaction_state-0 and __consumer_offsets-0: [('__consumer_offsets-0', 29), "
        "('__transaction_state-0', 29)]",
        "EndTxn(commit) after it: 48",
        "Produce to __transaction_state-0: 17",  # (no __consumer_offsets yet: no group has asked for it)
        "Produce of a batch with a wrong CRC to t0-0: 2",
        "Produce of garbage bytes to t0-0: 87"]
