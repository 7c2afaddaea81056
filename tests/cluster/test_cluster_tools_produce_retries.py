"""``kactor produce --bootstrap-server`` retries a retriable error as kcat does (librdkafka's own retries, bounded by
the delivery timeout only): records to a topic the broker is auto-creating (LEADER_NOT_AVAILABLE first) are written,
and an acks=all producer whose partition leader is SIGKILLed mid-run gets every record acknowledged once the
controller elected a new leader (seconds later: the dead broker's session must expire first)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import OVERRIDES, bootstrap, read_partition

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")


def test_produce_rides_out_auto_creation_and_a_leader_crash(start_cluster) -> None:
    c: Cluster = start_cluster(3, overrides=(*OVERRIDES, "auto.leader.rebalance.enable=false"),
                               killed_under_load=True)
    servers = bootstrap(c)
    got = subprocess.run([sys.executable, "-m", "kactor", "produce", "--bootstrap-server", servers, "--topic", "auto",
                          "--acks", "all"], input="one\ntwo\nthree\n", capture_output=True, text=True, timeout=120)
    assert (got.returncode, got.stdout, got.stderr) == (0, "auto-0: 3 records acknowledged at offsets 0..2 "
                                                           "(acks=all)\n", "")
    assert [v for _, v in read_partition(servers, "auto", 0)] == ["one", "two", "three"]

    c.create_topic("crash", assignment={0: [1, 2]})
    c.wait_partition("crash", 0, lambda st: st["isr"] == [1, 2], what="crash-0 fully in sync")
    # Records come from stdin in two parts, the second only after the leader's death: however slowly the first part
    # is acknowledged on a loaded machine, the second can only be acknowledged by a new leader.
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "produce", "--bootstrap-server", servers, "--topic",
                             "crash", "--acks", "all"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        from kactor.kafka_clients import admin_client, end_offsets

        assert proc.stdin is not None
        proc.stdin.write("".join(f"record-{i}\n" for i in range(20)))
        proc.stdin.flush()
        admin = admin_client(servers)
        c.wait(lambda: end_offsets(admin, [("crash", 0)], 5).get(("crash", 0), 0) >= 20, 60,
               "the first 20 records acknowledged by broker 1")
        c.kill(1)
        out, err = proc.communicate("".join(f"record-{i}\n" for i in range(20, 300)), timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out.startswith("crash-0: 300 records acknowledged at offsets 0..") and out.endswith(" (acks=all)\n"), out
    assert c.partition_state("crash", 0)["leader"] == 2  # the records after the kill were acknowledged by 2
    values = [v for _, v in read_partition(servers.replace(f"127.0.0.1:{c.lc.ports[1]},", ""), "crash", 0)]
    assert set(values) == {f"record-{i}" for i in range(300)}
