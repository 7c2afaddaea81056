"""``kafka-preferred-replica-election.sh --zookeeper``: Kafka 2.6's ``PreferredReplicaLeaderElectionCommand``
(ZkCommand path): write /admin/preferred_replica_election for the listed partitions, or for every partition."""

from __future__ import annotations

import json
from collections.abc import Callable

from kazoo.exceptions import NodeExistsError

from messages.common import TopicPartition
from protocol.zk import paths
from zk_bridge.admin import AdminCommandFailedException, AdminOperationException
from zk_bridge.admin.admin_zk import AdminZkClient
from zk_bridge.admin.assignment import duplicates

Out = Callable[[str], None]
DEPRECATION = ("This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405")


def parse_preferred_replica_election_data(text: str) -> set[TopicPartition]:
    """PreferredReplicaLeaderElectionCommand.parsePreferredReplicaElectionData:
    ``{"partitions":[{"topic":"foo","partition":0}]}``; duplicates are refused."""
    return _parse_election_data(text, "Preferred replica election data")


def parse_replica_election_data(text: str) -> set[TopicPartition]:
    """LeaderElectionCommand.parseReplicaElectionData: the same file as kafka-preferred-replica-election.sh's, with
    that tool's messages."""
    return _parse_election_data(text, "Replica election data", 'Replica election data is missing "partition" field')


def _parse_election_data(text: str, what: str, missing: str | None = None) -> set[TopicPartition]:
    try:
        js = json.loads(text)
    except ValueError:
        js = None
    if not isinstance(js, dict):
        raise AdminOperationException(f"{what} is empty")
    if "partitions" not in js:
        raise AdminOperationException(missing or f"{what} is empty")
    items = js["partitions"]
    if not isinstance(items, list):
        raise AdminOperationException('"partitions" must be a list of {"topic": ..., "partition": ...} objects')
    partitions: list[TopicPartition] = []
    for item in items:
        if (not isinstance(item, dict) or not isinstance(item.get("topic"), str)
                or isinstance(item.get("partition"), bool) or not isinstance(item.get("partition"), int)):
            raise AdminOperationException(f"Invalid partition entry {json.dumps(item)}: expected "
                                          '{"topic": "<name>", "partition": <int>}')
        partitions.append(TopicPartition(item["topic"], item["partition"]))
    dup = duplicates(partitions)
    if dup:
        raise AdminOperationException(f"{what} contains duplicate partitions: " + ",".join(map(str, dup)))
    return set(partitions)


def _fmt_set(partitions: set[TopicPartition]) -> str:
    return "Set(" + ", ".join(map(str, sorted(partitions))) + ")"


def elect_preferred_leaders(admin: AdminZkClient, out: Out,
                            partitions_from_user: set[TopicPartition] | None) -> set[TopicPartition]:
    """ZkCommand.electPreferredLeaders: existing partitions only (others are reported as skipped); NodeExists →
    "Preferred replica leader election currently in progress"."""
    all_partitions = admin.get_all_partitions()
    if partitions_from_user is None:
        valid, invalid = all_partitions, set()
    else:
        valid = {tp for tp in partitions_from_user if tp in all_partitions}
        invalid = partitions_from_user - valid
    if not valid:
        raise AdminCommandFailedException(
            "No partition to elect: " + ("the cluster has no partitions" if partitions_from_user is None else
                                         "none of the listed partitions exists ("
                                         + ",".join(map(str, sorted(invalid))) + ")"))
    if admin.exists(paths.PreferredReplicaElectionZNode):
        raise _in_progress(admin)
    try:
        admin.create_preferred_replica_election(valid)
    except NodeExistsError:
        raise _in_progress(admin) from None
    out("Created preferred replica election path with " + ",".join(map(str, sorted(valid))))
    out(f"Successfully started preferred replica election for partitions {_fmt_set(valid)}")
    for tp in sorted(invalid):
        out(f"Skipping preferred replica leader election for partition {tp} since it doesn't exist.")
    return valid


def _in_progress(admin: AdminZkClient) -> AdminOperationException:
    pending = admin.get_preferred_replica_election()
    return AdminOperationException("Preferred replica leader election currently in progress for "
                                   + ",".join(map(str, sorted(pending))) + ". Aborting operation")
