"""Metadata naming ``__transaction_state`` on a fresh cluster creates it as 2.6.3's KafkaApis.getTopicMetadata /
createInternalTopic does (audit finding 7): LEADER_NOT_AVAILABLE, then the topic with the transaction
coordinator's transaction.state.log.* settings, then its partitions; kactor answered UNKNOWN_TOPIC_OR_PARTITION and
created nothing."""

from __future__ import annotations

import pytest
from cluster_helpers import Cluster, raw_request

from messages.common import Errors

pytestmark = [pytest.mark.cluster]


def _metadata(c: Cluster, topic: str) -> dict:
    answer = raw_request("{}:{}".format(*c.lc.broker_address(0)), 3, 9, {
        "topics": [{"name": topic}], "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
    (t,) = answer["topics"]
    return t


def test_metadata_creates_the_transaction_log_with_its_coordinators_settings(start_cluster):
    c = start_cluster(1, overrides=("transaction.state.log.num.partitions=2",))
    first = _metadata(c, "__transaction_state")
    assert (Errors(first["error_code"]), first["is_internal"]) == (Errors.LEADER_NOT_AVAILABLE, True)
    c.wait(lambda: c.assignment("__transaction_state") == {0: [0], 1: [0]}, what="__transaction_state created")
    assert c.json("/config/topics/__transaction_state")["config"] == {
        "unclean.leader.election.enable": "false", "compression.type": "uncompressed", "cleanup.policy": "compact",
        "min.insync.replicas": "1", "segment.bytes": "104857600"}
    done = c.wait(lambda: (t := _metadata(c, "__transaction_state"))["error_code"] == 0 and len(t["partitions"]) == 2
                  and t, what="__transaction_state's partitions in Metadata")
    assert done["is_internal"]
