"""Dynamic config on a real cluster (Kafka 2.6's DynamicConfigManager): ``kactor configs`` writes
/config/topics/<t> and a /config/changes notification, every broker's config manager applies it without a restart —
min.insync.replicas on the partition leaders, unclean.leader.election.enable through the active controller."""

from __future__ import annotations

import pytest
from cluster_helpers import Cluster, produce, run_kactor

from kactor.trace.reader import read_records, trace_files_for_broker
from messages.common import Errors
from zk_bridge.admin.admin_zk import AdminZkClient

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _configs(c: Cluster, *args: str) -> str:
    return run_kactor("configs", "--zookeeper", c.connect_string, "--entity-type", "topics", *args).stdout


def test_min_insync_replicas_set_while_a_broker_is_down_refuses_acks_all(start_cluster) -> None:
    c = start_cluster(3)
    c.create_topic("orders", assignment={0: [0, 1, 2]})
    c.wait_partition("orders", 0, lambda st: st["leader"] == 0 and sorted(st["isr"]) == [0, 1, 2])
    c.kill(2)
    c.wait_partition("orders", 0, lambda st: st["isr"] == [0, 1], what="broker 2 out of the ISR")
    assert produce(c, "orders", 0, ("a",), acks=-1).error == Errors.NONE  # ISR 2 >= the default min of 1

    out = _configs(c, "--entity-name", "orders", "--alter", "--add-config", "min.insync.replicas=3")
    assert out == "Completed updating config for entity: topic 'orders'.\n"
    assert c.zk.get("/config/topics/orders")[0] == b'{"version":1,"config":{"min.insync.replicas":"3"}}'
    # no restart: the leader's config manager applies the change, and the next acks=all produce is refused
    errors = c.wait(lambda: [e for e in [produce(c, "orders", 0, ("b",), acks=-1).error] if e != Errors.NONE],
                    what="acks=all refused on the leader")
    assert errors == [Errors.NOT_ENOUGH_REPLICAS]
    assert produce(c, "orders", 0, ("c",), acks=1).error == Errors.NONE  # acks=1 is not subject to it
    state = c.partition_state("orders", 0)
    assert (state["leader"], state["isr"]) == (0, [0, 1])

    _configs(c, "--entity-name", "orders", "--alter", "--delete-config", "min.insync.replicas")
    c.wait(lambda: produce(c, "orders", 0, ("d",), acks=-1).error == Errors.NONE, what="acks=all accepted again")


def _leaderless_with_an_out_of_sync_replica_alive(c: Cluster, topic: str) -> dict:
    """``topic``-0 on brokers 0 and 1: 1 leaves the ISR, then 0 dies, then 1 comes back — no clean leader exists."""
    c.create_topic(topic, assignment={0: [0, 1]})
    c.wait_partition(topic, 0, lambda st: st["leader"] == 0 and sorted(st["isr"]) == [0, 1])
    c.kill(1)
    c.wait_partition(topic, 0, lambda st: st["isr"] == [0], what="broker 1 out of the ISR")
    c.kill(0)
    offline = c.wait_partition(topic, 0, lambda st: st["leader"] == -1, what="no leader")
    assert offline["isr"] == [0]
    c.restart(1)
    assert c.partition_state(topic, 0)["leader"] == -1
    return offline


def _sent_by_config_manager(c: Cluster, broker_id: int, event: str) -> bool:
    return any(rec.type == event and rec.sender == "config-manager" and rec.receiver == "controller"
               for path in trace_files_for_broker(c.trace_dir, broker_id) for rec in read_records(path))


def test_unclean_leader_election_enabled_on_a_topic_elects_an_out_of_sync_replica(start_cluster) -> None:
    c = start_cluster(3)
    offline = _leaderless_with_an_out_of_sync_replica_alive(c, "loose")

    _configs(c, "--entity-name", "loose", "--alter", "--add-config", "unclean.leader.election.enable=true")
    elected = c.wait_partition("loose", 0, lambda st: st["leader"] == 1, what="broker 1 elected uncleanly")
    assert elected["isr"] == [1]
    assert elected["leader_epoch"] == offline["leader_epoch"] + 1
    assert elected["controller_epoch"] == c.controller_epoch()

    # the active controller got the event from its own broker's config manager (TopicConfigHandler)
    controller = c.controller_id()
    c.wait(lambda: _sent_by_config_manager(c, controller, "TopicUncleanLeaderElectionEnable"),
           what="TopicUncleanLeaderElectionEnable from the config manager in the controller's trace")


def test_unclean_leader_election_enabled_as_the_cluster_default_elects_an_out_of_sync_replica(start_cluster) -> None:
    """A dynamic cluster default, written as a broker's AlterConfigs handler writes it (AdminZkClient
    .changeBrokerConfig: /config/brokers/<default> + a notification; kafka-configs.sh --zookeeper refuses it while
    brokers run): every broker's log defaults change, and the active controller, whose elections read them, elects
    the out-of-sync replica (DynamicLogConfig.reconfigure → UncleanLeaderElectionEnable)."""
    c = start_cluster(3)
    offline = _leaderless_with_an_out_of_sync_replica_alive(c, "lax")
    AdminZkClient(c.zk).change_broker_config(None, {"unclean.leader.election.enable": "true"})
    assert c.zk.get("/config/brokers/<default>")[0] == (
        b'{"version":1,"config":{"unclean.leader.election.enable":"true"}}')
    elected = c.wait_partition("lax", 0, lambda st: st["leader"] == 1, what="broker 1 elected uncleanly")
    assert (elected["isr"], elected["leader_epoch"]) == ([1], offline["leader_epoch"] + 1)
    controller = c.controller_id()
    c.wait(lambda: _sent_by_config_manager(c, controller, "UncleanLeaderElectionEnable"),
           what="UncleanLeaderElectionEnable from the config manager in the controller's trace")
