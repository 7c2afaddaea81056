"""Private ZooKeeper helpers of the controller core: the partition-state paths and JSON (TopicPartitionStateZNode),
topic config reads (ConfigEntityZNode), and the KafkaZkClient operations the state machines use, as procedures that
yield one pipelined `ZkBatch` per step.

(zk_bridge/znodes.py will own the shared encoders; these private copies keep the core unblocked — the lead dedupes.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from core.controller.errors import ConfigError, ControllerMovedError, KeeperError
from core.effects import Proc
from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from messages.zk import BADVERSION, CONTROLLER_MOVED, NONODE, OK, Create, GetData, SetData, ZkBatch, ZkOpResult

CONTROLLER_EPOCH_PATH = "/controller_epoch"
TOPICS_PATH = "/brokers/topics"
TOPIC_CONFIG_PATH = "/config/topics"

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


# -- paths (ZkData.scala) ---------------------------------------------------------------------------------------------
def topic_path(topic: str) -> str:
    """TopicZNode.path"""
    return f"{TOPICS_PATH}/{topic}"


def topic_partitions_path(topic: str) -> str:
    """TopicPartitionsZNode.path"""
    return f"{TOPICS_PATH}/{topic}/partitions"


def topic_partition_path(tp: TopicPartition) -> str:
    """TopicPartitionZNode.path"""
    return f"{TOPICS_PATH}/{tp.topic}/partitions/{tp.partition}"


def topic_partition_state_path(tp: TopicPartition) -> str:
    """TopicPartitionStateZNode.path"""
    return f"{TOPICS_PATH}/{tp.topic}/partitions/{tp.partition}/state"


def topic_config_path(topic: str) -> str:
    """ConfigEntityZNode.path(ConfigType.Topic, topic)"""
    return f"{TOPIC_CONFIG_PATH}/{topic}"


# -- payloads ---------------------------------------------------------------------------------------------------------
def encode_partition_state(state: LeaderIsrAndControllerEpoch) -> str:
    """TopicPartitionStateZNode.encode, e.g.
    ``{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}``."""
    lai = state.leader_and_isr
    isr = ",".join(str(r) for r in lai.isr)
    return (f'{{"controller_epoch":{state.controller_epoch},"leader":{lai.leader},"version":1,'
            f'"leader_epoch":{lai.leader_epoch},"isr":[{isr}]}}')


def decode_partition_state(data: str | None, zk_version: int) -> LeaderIsrAndControllerEpoch | None:
    """TopicPartitionStateZNode.decode: None for no data or data that does not parse (Kafka's Json.parseBytes)."""
    if not data:
        return None
    try:
        obj = json.loads(data)
        lai = LeaderAndIsr(int(obj["leader"]), int(obj["leader_epoch"]), tuple(int(r) for r in obj["isr"]), zk_version)
        return LeaderIsrAndControllerEpoch(lai, int(obj["controller_epoch"]))
    except (ValueError, KeyError, TypeError):
        return None


def decode_config(data: str | None) -> dict[str, str]:
    """ConfigEntityZNode.decode: the ``config`` map of ``{"version":1,"config":{...}}`` as strings (empty if none)."""
    if not data:
        return {}
    obj = json.loads(data)
    config = obj.get("config") or {}
    return {str(k): str(v) for k, v in config.items()}


def parse_bool_config(name: str, value: Any) -> bool:
    """ConfigDef BOOLEAN parsing: "true"/"false" ignoring case (or a bool)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text == "true":
        return True
    if text == "false":
        return False
    raise ConfigError(f"Invalid value {value} for configuration {name}: Expected value to be either true or false")


# -- KafkaZkClient operations -----------------------------------------------------------------------------------------
def _raise_if_controller_moved(results: Iterable[ZkOpResult], expected_version: int) -> None:
    for r in results:
        if r.code == CONTROLLER_MOVED:
            raise ControllerMovedError(
                f"Controller epoch zkVersion check fails. Expected zkVersion = {expected_version}")


def get_topic_partition_states_raw(partitions: Sequence[TopicPartition]) -> Proc[tuple[ZkOpResult, ...]]:
    """KafkaZkClient.getTopicPartitionStatesRaw: one GetData per partition state znode, pipelined, results in order."""
    results = yield ZkBatch(tuple(GetData(topic_partition_state_path(tp)) for tp in partitions))
    return results


def create_topic_partition_states_raw(
    states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], expected_controller_epoch_zk_version: int
) -> Proc[list[tuple[TopicPartition, ZkOpResult]]]:
    """KafkaZkClient.createTopicPartitionStatesRaw: create ``/partitions`` of each topic and ``/partitions/<p>`` of
    each partition (result codes ignored), then each ``.../state`` node, all epoch-fenced — pipelined in ONE batch
    (ZooKeeper applies a session's requests in order, so this equals Kafka's three round trips).

    Returns (partition, result of its state create) in ``states`` order; raises ControllerMovedError on a failed fence.
    """
    partitions = list(states)
    topics = list(dict.fromkeys(tp.topic for tp in partitions))
    ops: list[Any] = [Create(topic_partitions_path(t)) for t in topics]
    ops.extend(Create(topic_partition_path(tp)) for tp in partitions)
    first_state = len(ops)
    ops.extend(Create(topic_partition_state_path(tp), encode_partition_state(states[tp])) for tp in partitions)
    results = yield ZkBatch(tuple(ops), fence_version=expected_controller_epoch_zk_version)
    _raise_if_controller_moved(results, expected_controller_epoch_zk_version)
    return list(zip(partitions, results[first_state:], strict=True))


@attrs.frozen
class UpdateLeaderAndIsrResult:
    """KafkaZkClient.UpdateLeaderAndIsrResult: ``finished_partitions`` maps to the written LeaderAndIsr (zkVersion =
    the new znode version) or the exception; ``partitions_to_retry`` hit BADVERSION."""

    finished_partitions: dict[TopicPartition, LeaderAndIsr | Exception]
    partitions_to_retry: list[TopicPartition]


def update_leader_and_isr(
    leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
    expected_controller_epoch_zk_version: int,
) -> Proc[UpdateLeaderAndIsrResult]:
    """KafkaZkClient.updateLeaderAndIsr: conditional (zkVersion) setData of each state znode, epoch-fenced, pipelined.

    OK → LeaderAndIsr with the new zkVersion; BADVERSION → retry; other code → KeeperError. A failed fence raises
    ControllerMovedError; any other exception thrown into the procedure fails every partition.
    """
    if not leader_and_isrs:
        return UpdateLeaderAndIsrResult({}, [])
    partitions = list(leader_and_isrs)
    ops = tuple(
        SetData(topic_partition_state_path(tp),
                encode_partition_state(LeaderIsrAndControllerEpoch(leader_and_isrs[tp], controller_epoch)),
                leader_and_isrs[tp].zk_version)
        for tp in partitions
    )
    try:
        results = yield ZkBatch(ops, fence_version=expected_controller_epoch_zk_version)
        _raise_if_controller_moved(results, expected_controller_epoch_zk_version)
    except ControllerMovedError:
        raise
    except Exception as e:  # noqa: BLE001 - Kafka: any other exception fails every partition
        return UpdateLeaderAndIsrResult({tp: e for tp in partitions}, [])
    finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
    retry: list[TopicPartition] = []
    for tp, r in zip(partitions, results, strict=True):
        if r.code == OK:
            finished[tp] = leader_and_isrs[tp].with_zk_version(r.stat.version if r.stat is not None else -1)
        elif r.code == BADVERSION:
            retry.append(tp)
        else:
            finished[tp] = KeeperError(r.code, topic_partition_state_path(tp))
    return UpdateLeaderAndIsrResult(finished, retry)


def get_log_configs(topics: Iterable[str], defaults: Mapping[str, Any]) -> Proc[tuple[dict[str, dict[str, Any]],
                                                                                     dict[str, Exception]]]:
    """KafkaZkClient.getLogConfigs: read ``/config/topics/<t>`` of each topic (NONODE = no overrides) and merge the
    overrides over ``defaults`` (the broker's config). Returns (configs, failures) per topic; a topic whose read fails
    with another code, or whose ``unclean.leader.election.enable`` does not parse, is a failure.
    """
    topic_list = list(dict.fromkeys(topics))
    if not topic_list:
        return {}, {}
    results = yield ZkBatch(tuple(GetData(topic_config_path(t)) for t in topic_list))
    configs: dict[str, dict[str, Any]] = {}
    failed: dict[str, Exception] = {}
    for topic, r in zip(topic_list, results, strict=True):
        try:
            if r.code == OK:
                overrides = decode_config(r.data)
            elif r.code == NONODE:
                overrides = {}
            else:
                raise KeeperError(r.code, topic_config_path(topic))
            merged: dict[str, Any] = dict(defaults)
            merged.update(overrides)
            merged[UNCLEAN_LEADER_ELECTION_ENABLE] = parse_bool_config(
                UNCLEAN_LEADER_ELECTION_ENABLE, merged.get(UNCLEAN_LEADER_ELECTION_ENABLE, False))
            configs[topic] = merged
        except Exception as e:  # noqa: BLE001 - LogConfig.fromProps failures are per topic
            failed[topic] = e
    return configs, failed
