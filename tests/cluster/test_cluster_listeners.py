"""Kafka 2.6's named listeners on a real cluster: every broker binds two PLAINTEXT listeners, EXTERNAL first and
INTERNAL second, with ``inter.broker.listener.name=INTERNAL``. Each registers both (the v4 JSON with its
listener_security_protocol_map), and the controller's channels and the followers' fetchers connect to INTERNAL only:
a broker that took the first registered endpoint would connect to EXTERNAL.
"""

from __future__ import annotations

import json

import pytest
from cluster_helpers import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NAMED = ("listeners=EXTERNAL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
         "listener.security.protocol.map=EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT",
         "inter.broker.listener.name=INTERNAL",
         "auto.leader.rebalance.enable=false")


def _established_to(port: int) -> int:
    """Established TCP connections whose local end is 127.0.0.1:``port`` (the broker's accepted ones)."""
    count = 0
    with open("/proc/net/tcp", encoding="ascii") as f:
        for line in f.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "01" and local == f"0100007F:{port:04X}":
                count += 1
    return count


def _ports(c: Cluster, broker_id: int) -> dict[str, int]:
    reg = c.json(f"/brokers/ids/{broker_id}")
    external, internal = reg["endpoints"]
    assert external.startswith("EXTERNAL://127.0.0.1:") and internal.startswith("INTERNAL://127.0.0.1:")
    assert reg["listener_security_protocol_map"] == {"EXTERNAL": "PLAINTEXT", "INTERNAL": "PLAINTEXT"}
    # the top-level host/port: the first PLAINTEXT endpoint's (KafkaZkClient's BrokerIdZNode.encode)
    assert (reg["host"], reg["port"]) == ("127.0.0.1", int(external.rsplit(":", 1)[1]))
    assert reg["version"] == 4 and reg["jmx_port"] == -1
    return {"EXTERNAL": int(external.rsplit(":", 1)[1]), "INTERNAL": int(internal.rsplit(":", 1)[1])}


def test_controller_and_followers_connect_by_the_inter_broker_listener(start_cluster) -> None:  # type: ignore[no-untyped-def]
    c = start_cluster(3, overrides=NAMED)
    ports = {b: _ports(c, b) for b in range(3)}
    assert all(0 not in p.values() and p["EXTERNAL"] != p["INTERNAL"] for p in ports.values()), ports

    c.create_topic("t", assignment={0: [0, 1, 2], 1: [1, 2, 0]})
    for p in (0, 1):
        c.wait_partition("t", p, lambda s: sorted(s["isr"]) == [0, 1, 2], what=f"t-{p} ISR of 3")
    controller = c.controller_id()
    # brokers 0 and 1 lead (fetchers of the other two connect), and the controller reaches every broker
    for b in range(3):
        peers_expected = 2 if b in (0, 1) else (1 if controller != 2 else 0)
        c.wait(lambda b=b, n=peers_expected: _established_to(ports[b]["INTERNAL"]) >= n,
               what=f"connections to broker {b}'s INTERNAL listener")
        assert _established_to(ports[b]["EXTERNAL"]) == 0, f"a connection to broker {b}'s EXTERNAL listener"

    # a controlled shutdown finds the controller by its INTERNAL endpoint too: the leaderships move before exit
    victim = 0 if controller != 0 else 1
    assert c.stop_broker(victim) == 0
    for p in (0, 1):
        st = c.partition_state("t", p)
        assert st is not None and st["leader"] != victim and victim not in st["isr"], (p, st)
    assert json.loads(c.zk.get("/brokers/topics/t")[0])["partitions"] == {"0": [0, 1, 2], "1": [1, 2, 0]}
