"""Issue #9 on a trace recorded from a real cluster: leader elections counted by strategy match what ZooKeeper's
partition state znodes say happened, and the HTML report of that trace has its plots.

The story: 3 brokers, topic ``demo`` (4 partitions, RF 3) and ``demo-doomed`` (2 partitions, RF 2) created, then a
broker that leads partitions and is not the controller is SIGKILLed; at the end the brokers stop one at a time.
Kafka 2.6: every new partition gets an InitialLeader election (leader epoch 0); each partition the dead broker led
gets one OfflinePartition election (epoch + 1); each partition where it was only a follower is shrunk out of the ISR
by the controller (removeReplicasFromIsr), which also bumps the leader epoch, with no election.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from test_spark_report import png_size

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


@pytest.fixture(scope="module")
def killed_broker_run(zk_server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: ANN001


    from kactor.demo import Scenario

    connect = new_chroot(zk_server.connect_string, "spark")
    base = tmp_path_factory.mktemp("spark-cluster")
    traces = str(base / "traces")
    # the controller stops last, and its leaderships have nowhere to go: its controlled shutdown is refused and
    # retried controlled.shutdown.max.retries times; Kafka's 5 s backoff between made the stop ~10 s longer
    lc = LocalCluster(3, zookeeper=connect, base_dir=str(base / "data"), trace_dir=traces,
                      overrides=["zookeeper.session.timeout.ms=4000", "controlled.shutdown.retry.backoff.ms=200"])
    sc = Scenario(lc, partitions=4, say=lambda _: None)
    try:
        lc.start()
        result = sc.run(["create", "kill"])
        final = sc.states(["demo", "demo-doomed"])
        sc.stop_cluster()  # one broker at a time, the controller last (controlled shutdowns move leaders)
        stopped = sc.states(["demo", "demo-doomed"])
    finally:
        sc.close()
        lc.stop()
    assert result.failures == [], result.steps
    return {"traces": traces, "result": result, "final": final, "stopped": stopped}


def test_elections_by_strategy_match_the_znodes(spark: Any, killed_broker_run: dict[str, Any], tmp_path) -> None:  # noqa: ANN001
    from kactor.trace.incidents import report_rows
    from spark.report import PLOTS, add_incidents, build_report
    from spark.summarize import summarize

    run = killed_broker_run
    result = run["result"]
    before, after = result.states["before_kill"], result.states["after_kill"]
    victim = result.victim
    assert set(before) == set(after) == set(run["final"])
    assert all(st.leader_epoch == 0 for st in before.values())  # one InitialLeader election each, no other
    led = [tp for tp, st in before.items() if st.leader == victim]
    followed = [tp for tp, st in before.items() if st.leader != victim and victim in st.isr]
    assert led == result.led_by_victim and led, "the victim led partitions"
    for tp in led + followed:
        assert after[tp].leader_epoch == 1, (tp, after[tp])
        assert victim not in after[tp].isr

    out = str(tmp_path / "summary")
    summary = summarize(spark, [run["traces"]], out)
    elections = {(r["strategy"], r["kind"]): r["count"] for r in summary["tables"]["leader_elections"]}
    # the orderly stop at the end: each leadership moved off a stopping broker is one ControlledShutdown election
    final, stopped = run["final"], run["stopped"]
    moved = [tp for tp in final if stopped[tp].leader != final[tp].leader and stopped[tp].leader != -1]
    expected = {("InitialLeader", "clean"): len(before), ("OfflinePartition", "clean"): len(led)}
    if moved:
        expected[("ControlledShutdownPartition", "clean")] = len(moved)
    assert elections == expected, (final, stopped)
    # every leader-epoch bump in ZooKeeper is an OfflinePartition election or an ISR shrink by the controller
    epoch_bumps = sum(after[tp].leader_epoch - before[tp].leader_epoch for tp in before)
    assert epoch_bumps == elections[("OfflinePartition", "clean")] + len(followed)

    index = build_report(out, summary, find=report_rows)
    with open(index, encoding="utf-8") as f:
        page = f.read()
    for name in PLOTS:
        assert f'src="{name}"' in page
        w, h = png_size(os.path.join(out, name))
        assert 300 <= w <= 4000 and 200 <= h <= 4000, (name, w, h)
        assert os.path.getsize(os.path.join(out, name)) > 5_000, name  # a plot, not an empty canvas
    assert "OfflinePartition" in page
    # issue #30: the report's first screen flags the kill, with the partitions the victim led and how long they had
    # no leader, and the under-replicated series is not 0 while the victim was down
    # what build_report showed: a copy of the summary with the incidents
    with_incidents = add_incidents(summary, find=report_rows)
    incidents = with_incidents["tables"]["incidents"]
    (down,) = [i for i in incidents if i["kind"] == "broker_down"]
    assert down["subject"] == f"broker {victim}" and "killed" in down["detail"]
    (offline,) = [i for i in incidents if i["kind"] == "partition_offline"]
    assert offline["partitions"].split() == sorted(led) and offline["start_ts"] == down["start_ts"]
    assert offline["duration_ms"] > 0 and f"its leader, broker {victim}, was killed" in offline["detail"]
    assert any(i["kind"] == "under_replicated" and f"broker {victim} not in the ISR" in i["detail"]
               and i["duration_ms"] != 0 for i in incidents)
    assert max(r["under_replicated_partitions_max"] or 0 for r in with_incidents["tables"]["gauges_timeline"]) > 0
    assert page.index('id="incidents"') < page.index("<h2>Plots</h2>") and "<td>partition_offline</td>" in page
    shutil.rmtree(out, ignore_errors=True)
