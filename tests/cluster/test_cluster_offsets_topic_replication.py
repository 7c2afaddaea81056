"""``__consumer_offsets`` gets offsets.topic.replication.factor replicas, never fewer (2.6's
KafkaApis.createInternalTopic): a 3-broker cluster with one broker still down answers FindCoordinator
COORDINATOR_NOT_AVAILABLE and creates nothing, logging 2.6's "can be ignored if the cluster is starting up" line;
once the third broker is up the topic is created with 3 replicas per partition and the group finds its coordinator.
(kactor created the topic at once with the 2 live brokers, for ever.) Also: a LocalCluster of fewer than 3 brokers
sets offsets.topic.replication.factor (and the transaction log's) to its broker count, as Kafka's single-broker
server.properties does."""

from __future__ import annotations

import pytest
from cluster_helpers import Cluster, raw_request

from core.coordinator.group.group_metadata_manager import partition_for
from kactor.cluster import small_cluster_overrides
from messages.common import Errors

pytestmark = [pytest.mark.cluster]

FIND_COORDINATOR = 10
IGNORABLE = "This error can be ignored if the cluster is starting up and not all brokers are up yet."


def _find_coordinator(c: Cluster, broker: int) -> dict:
    return raw_request("{}:{}".format(*c.lc.broker_address(broker)), FIND_COORDINATOR, 2,
                       {"key": "g", "key_type": 0})


@pytest.mark.slow
def test_the_offsets_topic_waits_for_enough_live_brokers(start_cluster):
    c = start_cluster(3, overrides=("offsets.topic.num.partitions=4",))
    c.stop_broker(2)  # the cluster is still coming up: a client asks before the third broker is there
    c.wait(lambda: c.live_brokers() == [0, 1], what="brokers 0 and 1 alone registered")
    for _ in range(3):
        assert Errors(_find_coordinator(c, 0)["error_code"]) is Errors.COORDINATOR_NOT_AVAILABLE
    assert not c.zk.exists("/brokers/topics/__consumer_offsets")
    with open(c.lc.logs[0]) as log:
        assert ("Number of alive brokers '2' does not meet the required replication factor '3' for the offsets topic "
                f"(configured via 'offsets.topic.replication.factor'). {IGNORABLE}") in log.read()
    c.restart(2)
    c.wait(lambda: Errors(_find_coordinator(c, 0)["error_code"]) is Errors.NONE, what="a coordinator for g")
    assert {p: len(r) for p, r in c.assignment("__consumer_offsets").items()} == {0: 3, 1: 3, 2: 3, 3: 3}
    # broker 1 names the coordinator its metadata cache knows, so it may answer a moment after broker 0 does
    def named_by_broker_1() -> dict | None:
        answer = _find_coordinator(c, 1)
        return answer if Errors(answer["error_code"]) is Errors.NONE else None

    found = c.wait(named_by_broker_1, what="broker 1 naming g's coordinator")
    leader = c.partition_state("__consumer_offsets", partition_for("g", 4))["leader"]
    assert (found["node_id"], found["port"]) == (leader, c.lc.broker_address(leader)[1])


def test_a_cluster_of_fewer_than_three_brokers_lowers_the_offsets_topics_replication_factor():
    # and the transaction log's, as Kafka's single-broker server.properties (tests/cluster/data) sets all three
    assert small_cluster_overrides(1, ["a=b"]) == ["offsets.topic.replication.factor=1",
                                                   "transaction.state.log.replication.factor=1",
                                                   "transaction.state.log.min.isr=1", "a=b"]
    assert small_cluster_overrides(2, []) == ["offsets.topic.replication.factor=2",
                                              "transaction.state.log.replication.factor=2"]
    assert small_cluster_overrides(3, ["a=b"]) == ["a=b"]
    assert small_cluster_overrides(1, ["offsets.topic.replication.factor=1", "transaction.state.log.min.isr=1"]) \
        == ["transaction.state.log.replication.factor=1", "offsets.topic.replication.factor=1",
            "transaction.state.log.min.isr=1"]
