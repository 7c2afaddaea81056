"""Brokers with an authorizer start with complete metadata (issue #39): three brokers with ``authorizer.class.name``
set, no ``super.users`` and ``allow.everyone.if.no.acl.found=true`` (KafkaJS's docker-compose settings), started
together, each answer Metadata with all three brokers and the controller, start-up after start-up. Kafka 2.6.3
reads no request before its authorizer has loaded the ACLs; a kactor broker that did refused the controller's first
UpdateMetadata (CLUSTER_AUTHORIZATION_FAILED: the inter-broker principal User:ANONYMOUS is no super user, and the
ACL-less authorizer of the start allows super users only) and then reported no brokers until some later change.

``KACTOR_ACL_STARTUP_ITERATIONS`` sets how many start-ups (5 by default; the issue's check is 20)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS, Cluster

from kactor.cli import kafka_wire
from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot
from zk_bridge.server import EmbeddedZooKeeper

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ITERATIONS = int(os.environ.get("KACTOR_ACL_STARTUP_ITERATIONS", "5"))
OVERRIDES = (f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}", "controlled.shutdown.enable=false",
             "authorizer.class.name=kafka.security.auth.SimpleAclAuthorizer", "allow.everyone.if.no.acl.found=true")


def metadata(lc: LocalCluster, broker: int) -> tuple[set[int], int]:
    """The brokers and the controller of broker ``broker``'s Metadata answer."""
    answer = kafka_wire.exchange(lc.broker_address(broker), *kafka_wire.METADATA, kafka_wire.NO_TOPICS, timeout_s=10)
    return {n["node_id"] for n in answer["brokers"]}, answer["controller_id"]


def start_up(i: int, connect: str, base_dir: Path) -> None:
    """Start-up ``i``: three brokers at once, as a docker-compose file starts them; every broker's metadata complete
    and no UpdateMetadata refused."""
    lc = LocalCluster(3, zookeeper=connect, base_dir=str(base_dir), overrides=list(OVERRIDES))
    c = Cluster(lc)
    try:
        lc.start()
        c.wait(lambda: len(c.zk.get_children("/brokers/ids")) == 3 and c.controller_id() is not None,
               what=f"start-up {i}: 3 brokers registered and a controller")
        controller = c.controller_id()
        # the controller's UpdateMetadata reaches each broker within moments; a refused one is never resent
        c.wait(lc.metadata_complete, what=f"start-up {i}: every broker's metadata to list them all")
        for b in range(3):
            assert metadata(lc, b) == ({0, 1, 2}, controller), f"start-up {i}, broker {b}"
        for b in range(3):
            logged = Path(lc.logs[b]).read_text(errors="replace")
            assert "in UpdateMetadata response" not in logged, f"start-up {i}: broker {b} logged a refusal"
    finally:
        c.stop(concurrent=True)


def test_every_start_up_of_brokers_with_an_authorizer_ends_with_complete_metadata(
        zk_server: EmbeddedZooKeeper, tmp_path: Path) -> None:
    for i in range(1, ITERATIONS + 1):
        start_up(i, new_chroot(zk_server.connect_string), tmp_path / f"run-{i}")
