"""A simulated producer (acks=all) speaking the request type the broker's replica manager takes.

It sends the internal ``ProduceRequest`` a Kafka Produce v8 converts to (core/api's request_from_wire), as a
``NetRequest`` to the partition leader's replica manager, and records every answer. It finds the leader as its
Metadata would eventually show it: in the partition's state znode (a Metadata request is a later step).
"""

from __future__ import annotations

import functools

import attrs

from messages.common import Errors, LeaderAndIsr, TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from protocol.records import Record, build_batch
from protocol.zk import paths, znodes
from sim.runtime import START_MS, Sim

PRODUCE_VERSION = 8
PRODUCE_TIMEOUT_MS = 30000  # the producer's request.timeout.ms


@attrs.frozen
class Ack:
    tp: TopicPartition
    offset: int
    value: str
    sent_ms: float
    answered_ms: float
    healthy_since_ms: float | None  # the cluster healthy all along since then (None: not when it was sent)


@attrs.define
class Outstanding:
    tp: TopicPartition
    value: str
    leader: int
    sent_ms: float
    healthy_since_ms: float | None


# The checks read every partition's state znode a few times a step, and it seldom changes: decoded once per distinct
# (data, version), a few thousand kept (the worker runs seed after seed). 2.4 % of a seed's time went to decoding
# (cProfile of seeds 1-20 x 50, 2026-11-27); tests/sim/test_sim_client.py compares it with a plain decode.
_DECODED_STATES: dict[tuple[str, int], LeaderAndIsr | None] = {}
_DECODED_STATES_MAX = 4096
# and each partition's state znode path, built once (three nested path functions: most of a look-up's time)
_state_path = functools.lru_cache(maxsize=_DECODED_STATES_MAX)(paths.TopicPartitionStateZNode.path)


def zk_partition_state(sim: Sim, tp: TopicPartition) -> LeaderAndIsr | None:
    """The partition's /brokers/topics/<t>/partitions/<p>/state, read straight from the model (no request, no watch,
    no zxid: an observer's read)."""
    node = sim.zk.nodes.get(_state_path(tp))
    if node is None or node.data is None:
        return None
    key = (node.data, node.version)
    try:
        return _DECODED_STATES[key]
    except KeyError:
        pass
    state = znodes.decode_partition_state(node.data, node.version)
    if len(_DECODED_STATES) >= _DECODED_STATES_MAX:
        _DECODED_STATES.clear()
    decoded = _DECODED_STATES[key] = None if state is None else state.leader_and_isr
    return decoded


def zk_partition_leader(sim: Sim, tp: TopicPartition) -> int:
    """The leader the partition's state znode names (-1: none, or no state yet)."""
    state = zk_partition_state(sim, tp)
    return -1 if state is None else state.leader


class SimClient:
    """Produces one record at a time per call, acks=all; ``acks`` are the acknowledged records, ``answers`` every
    answer as (tp, value, error name or "connection failed")."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.acks: list[Ack] = []
        self.answers: list[tuple[TopicPartition, str, str]] = []
        self.outstanding: dict[str, Outstanding] = {}
        # (answer time, healthy since, sent at, value, error) of every answered produce
        self.latencies: list[tuple[float, float | None, float, str, str]] = []
        self._n = 0

    def produce(self, tp: TopicPartition) -> bool:
        state = zk_partition_state(self.sim, tp)
        if state is None or state.leader < 0:
            return False
        leader = state.leader
        self._n += 1
        value = f"s{self.sim.seed}-{self._n}"
        now = self.sim.now
        # one uncompressed record, no key, no producer id, stamped now (a producer's CreateTime)
        batch = build_batch([Record(0, 0, None, value.encode())], first_timestamp=int(now))
        request = ProduceRequest(-1, PRODUCE_TIMEOUT_MS, (ProducePartition(tp, batch),))
        healthy = self.sim.last_fault_ms - START_MS if self.sim.healthy() else None
        self.outstanding[value] = Outstanding(tp, value, leader, now, healthy)
        self.sim.note(f"client produce {value} to {tp.topic}-{tp.partition} at b{leader}")
        self.sim.client_request(leader, request, PRODUCE_VERSION, lambda answer: self._answered(value, answer))
        return True

    def _answered(self, value: str, answer: object) -> None:
        out = self.outstanding.pop(value)
        if answer is None:
            self.answers.append((out.tp, value, "connection failed"))
            self.sim.note(f"client {value}: connection failed")
            return
        part = answer.partitions[0]  # type: ignore[attr-defined]
        self.answers.append((out.tp, value, part.error.name))
        self.latencies.append((self.sim.now - out.sent_ms, out.healthy_since_ms
                               if self.sim.last_fault_ms - START_MS == out.healthy_since_ms else None,
                               out.sent_ms - START_MS, value, part.error.name))
        self.sim.note(f"client {value}: {part.error.name} offset {part.base_offset}")
        if part.error == Errors.NONE:
            healthy = out.healthy_since_ms if self.sim.last_fault_ms - START_MS == out.healthy_since_ms else None
            self.acks.append(Ack(out.tp, part.base_offset, value, out.sent_ms - START_MS, self.sim.now - START_MS,
                                 healthy))
