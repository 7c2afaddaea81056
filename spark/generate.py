"""Synthetic but valid kactor traces: `kactor trace generate --messages N --brokers B --partitions P --out DIR`.

A small simulation of a cluster driven by one controller: periodic auto-rebalance and ISR-change events, broker
failures and restarts (OfflinePartition elections, clean and now and then unclean), controlled shutdowns,
preferred-replica and reassignment elections, topic deletions (StopReplica) and re-creations, controller
fail-overs (with a zombie controller's request rejected with STALE_CONTROLLER_EPOCH), retried requests and rare
slow events. Every line is what messages.codec.encode_record would write for a real message object: payload
JSON is built from templates for speed, byte-identical to the message codec (tests check every line).

Deterministic for a given --seed. Writes one file per broker process, broker-<id>.jsonl, N record lines in all.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from dataclasses import dataclass

from actors import names
from messages.codec import TRACE_VERSION
from messages.common import Broker, EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from protocol.zk import paths, znodes

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
PARTITIONS_PER_TOPIC = 8
MAX_STATES_PER_REQUEST = 25
FLUSH_LINES = 20_000

NONE = '{"@e":"Errors","v":"NONE"}'


# the principal field the controller-to-broker requests carry (messages.requests), as encode_record writes it
PRINCIPAL = ',"principal":"User:ANONYMOUS"'

def _err(name: str) -> str:
    return '{"@e":"Errors","v":"' + name + '"}'


def _ints(xs: list[int] | tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, xs)) + "]"


def _b(v: bool) -> str:
    return "true" if v else "false"


class _LimitReachedError(Exception):
    pass


def _watch_event(path: str, kind: str) -> str:
    return '{"@":"ZkWatchEvent","path":' + json.dumps(path) + ',"kind":"' + kind + '"}'


def _get_children(path: str) -> str:
    return '{"@":"GetChildren","path":' + json.dumps(path) + ',"watch":true}'

@dataclass
class GenerateStats:
    messages: int
    files: list[str]
    partitions: int
    topics: int
    elapsed_s: float


class Generator:
    def __init__(self, messages: int, brokers: int, partitions: int, seed: int = 0) -> None:
        if messages < 1 or brokers < 1 or partitions < 1:
            raise ValueError("messages, brokers and partitions must all be at least 1")
        self.limit = messages
        self.nb = brokers
        self.rng = random.Random(seed)
        self.seed = seed
        self.count = 0
        self.now = BASE_MS * 1000  # microseconds
        self.seq = [0] * brokers
        self.bufs: list[list[str]] = [[] for _ in range(brokers)]
        self.files: list = []
        self.rf = min(3, brokers)
        # topics and partitions
        self.topics: list[str] = []
        self.tp: list[str] = []  # codec JSON of each TopicPartition
        self.tp_name: list[tuple[str, int]] = []
        self.topic_parts: dict[str, list[int]] = {}
        i = 0
        while i < partitions:
            name = f"topic-{len(self.topics):04d}"
            self.topics.append(name)
            n = min(PARTITIONS_PER_TOPIC, partitions - i)
            self.topic_parts[name] = list(range(i, i + n))
            for p in range(n):
                self.tp.append('{"@":"TopicPartition","topic":"' + name + '","partition":' + str(p) + "}")
                self.tp_name.append((name, p))
            i += n
        self.np = partitions
        self.replicas: list[list[int]] = []
        for i in range(partitions):
            start = i % brokers
            self.replicas.append([(start + k) % brokers for k in range(self.rf)])
        self.leader = [r[0] for r in self.replicas]
        self.epoch = [0] * partitions
        self.zkv = [0] * partitions
        self.isr = [list(r) for r in self.replicas]
        self.offline: set[int] = set()
        self.urp: set[int] = set()
        self.imbalanced: set[int] = set()
        self.alive = list(range(brokers))
        self.dead: list[int] = []
        self.broker_epoch = {b: 4096 + b for b in range(brokers)}
        self.broker_json = {b: self._broker_json(b) for b in range(brokers)}
        self.controller = 0
        self.cepoch = 1
        self.zk_req = 0
        self.deleting: dict[str, str] = {}  # topic -> phase (Started / Ineligible)
        self.deleted: list[str] = []  # deleted, to be re-created
        self.reassigning: dict[int, list[int]] = {}  # partition -> target replicas
        self.pending_events: list[tuple[int, str, str, int]] = []  # (enqueued_us, event, state, cause)
        self.load = [0] * brokers  # channel queue backlog per broker
        self.lair_cache: dict[int, str] = {}
        self.um_cache: dict[int, str] = {}
        self._gauges_key: tuple = ()
        self._gauges = ""
        self.jitter = [5 + int(self.rng.random() * 60) for _ in range(4096)]

    # -- output ---------------------------------------------------------------------------------------------------
    def _broker_json(self, b: int) -> str:
        return ('{"@":"Broker","id":' + str(b) + ',"endpoints":[{"@":"EndPoint","host":"127.0.0.1","port":'
                + str(9092 + b) + ',"listener_name":"PLAINTEXT","security_protocol":"PLAINTEXT"}],"rack":null,'
                '"epoch":' + str(self.broker_epoch[b]) + "}")

    def emit(self, proc: int, sender: str, receiver: str, typ: str, payload: str, cause: int | None) -> int:
        s = self.seq[proc] = self.seq[proc] + 1
        self.count = count = self.count + 1
        self.now = now = self.now + self.jitter[count & 4095]
        buf = self.bufs[proc]
        buf.append(f'{{"seq":{s},"ts":{now / 1000!r},"sender":"{sender}","receiver":"{receiver}",'
                   f'"type":"{typ}","payload":{payload},"cause":{"null" if cause is None else cause}}}\n')
        if len(buf) >= FLUSH_LINES:
            self.files[proc].write("".join(buf))
            buf.clear()
        if count >= self.limit:
            raise _LimitReachedError
        return s

    def ms(self) -> float:
        return self.now / 1000

    # -- partition state bookkeeping --------------------------------------------------------------------------------
    def set_state(self, i: int, leader: int, isr: list[int]) -> None:
        self.invalidate(i)
        self.leader[i] = leader
        self.isr[i] = isr
        self.epoch[i] += 1
        self.zkv[i] += 1
        (self.offline.add if leader < 0 else self.offline.discard)(i)
        (self.urp.add if len(isr) < len(self.replicas[i]) else self.urp.discard)(i)
        (self.imbalanced.add if leader != self.replicas[i][0] else self.imbalanced.discard)(i)

    # -- payload templates ----------------------------------------------------------------------------------------
    def invalidate(self, i: int | None = None) -> None:
        """Forget cached request states: of partition i, or of all (controller epoch or live brokers changed)."""
        if i is None:
            self.lair_cache.clear()
            self.um_cache.clear()
        else:
            self.lair_cache.pop(i, None)
            self.um_cache.pop(i, None)

    def lair_state(self, i: int, is_new: bool = False) -> str:
        if not is_new:
            cached = self.lair_cache.get(i)
            if cached is None:
                cached = self.lair_cache[i] = self._lair_state(i, False)
            return cached
        return self._lair_state(i, True)

    def um_state(self, i: int) -> str:
        cached = self.um_cache.get(i)
        if cached is None:
            cached = self.um_cache[i] = self._um_state(i)
        return cached

    def _lair_state(self, i: int, is_new: bool) -> str:
        return ('{"@":"LeaderAndIsrPartitionState","topic_partition":' + self.tp[i] + ',"controller_epoch":'
                + str(self.cepoch) + ',"leader":' + str(self.leader[i]) + ',"leader_epoch":' + str(self.epoch[i])
                + ',"isr":' + _ints(self.isr[i]) + ',"zk_version":' + str(self.zkv[i]) + ',"replicas":'
                + _ints(self.replicas[i]) + ',"adding_replicas":[],"removing_replicas":[],"is_new":'
                + _b(is_new) + "}")

    def _um_state(self, i: int) -> str:
        offline = [r for r in self.replicas[i] if r in self.dead]
        return ('{"@":"UpdateMetadataPartitionState","topic_partition":' + self.tp[i] + ',"controller_epoch":'
                + str(self.cepoch) + ',"leader":' + str(self.leader[i]) + ',"leader_epoch":' + str(self.epoch[i])
                + ',"isr":' + _ints(self.isr[i]) + ',"zk_version":' + str(self.zkv[i]) + ',"replicas":'
                + _ints(self.replicas[i]) + ',"offline_replicas":' + _ints(offline) + "}")

    def pchange(self, i: int, a: str, b: str) -> str:
        return ('{"@":"PartitionStateChange","topic_partition":' + self.tp[i] + ',"from_state":"' + a
                + '","to_state":"' + b + '"}')

    def rchange(self, i: int, r: int, a: str, b: str) -> str:
        return ('{"@":"ReplicaStateChange","topic_partition":' + self.tp[i] + ',"replica":' + str(r)
                + ',"from_state":"' + a + '","to_state":"' + b + '"}')

    def election(self, i: int, strategy: str, unclean: bool = False) -> str:
        return ('{"@":"LeaderElection","topic_partition":' + self.tp[i] + ',"strategy":"' + strategy
                + '","leader":' + str(self.leader[i]) + ',"leader_epoch":' + str(self.epoch[i]) + ',"isr":'
                + _ints(self.isr[i]) + ',"unclean":' + _b(unclean) + "}")

    def batch(self, pchanges: list[str], rchanges: list[str], elections: list[str]) -> str:
        return ('{"@":"StateChangeBatch","controller_epoch":' + str(self.cepoch) + ',"partition_changes":['
                + ",".join(pchanges) + '],"replica_changes":[' + ",".join(rchanges) + '],"elections":['
                + ",".join(elections) + "]}")

    # -- building blocks --------------------------------------------------------------------------------------------
    def zk_roundtrip(self, cause: int, ops: list[str], fenced: bool = False) -> int:
        """ZkRequest controller → zk-bridge, then its ZkResponse (an input from ZooKeeper)."""
        c = self.controller
        self.zk_req += 1
        rid = self.zk_req
        req = ('{"@":"ZkRequest","request_id":' + str(rid) + ',"batch":{"@":"ZkBatch","ops":[' + ",".join(ops)
               + '],"fence_version":' + str(self.cepoch if fenced else -1) + '},"reply_to":"controller"}')
        self.emit(c, names.CONTROLLER, "zk-bridge", "ZkRequest", req, cause)
        self.now += 300 + int(self.rng.random() * 1500)
        results = ",".join(
            '{"@":"ZkOpResult","code":"OK","data":null,"stat":{"@":"ZStat","version":' + str(k)
            + ',"czxid":0,"ephemeral_owner":0,"ctime":0,"num_children":0},"children":null,"path":null,'
            '"results":null}' for k in range(len(ops)))
        return self.emit(c, names.EDGE_ZK, names.CONTROLLER, "ZkResponse",
                         '{"@":"ZkResponse","request_id":' + str(rid) + ',"results":[' + results + "]}", None)

    def get_data(self, path: str) -> str:
        return '{"@":"GetData","path":' + json.dumps(path) + ',"watch":true}'

    def set_partition_state(self, i: int) -> str:
        topic, p = self.tp_name[i]
        data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(
            LeaderAndIsr(self.leader[i], self.epoch[i], tuple(self.isr[i]), 0), self.cepoch))
        return ('{"@":"SetData","path":' + json.dumps(paths.TopicPartitionStateZNode.path(TopicPartition(topic, p)))
                + ',"data":' + json.dumps(data) + ',"version":' + str(self.zkv[i] - 1) + "}")

    def request(self, cause: int, b: int, kind: str, payload: str, response: str, error: str = "NONE",
                stale: bool = False) -> None:
        """One controller → broker request: the channel gets it, the broker's replica manager gets it over the
        network, the response comes back to the channel, which records ChannelRequestCompleted."""
        c = self.controller
        ch = names.channel(b)
        self.emit(c, names.CONTROLLER, ch, kind + "Request", payload, cause)
        enq_ms = self.ms()
        backlog = self.load[b]
        self.now += 50 + backlog * 200 + int(self.rng.random() * 400)
        sent_ms = self.ms()
        attempts = 1
        if self.rng.random() < 0.01:
            attempts = 2 + (self.rng.random() < 0.2)
            self.now += 100_000 * (attempts - 1) + int(self.rng.random() * 50_000)
        if b in self.alive:
            self.emit(b, names.EDGE_NET, names.REPLICA_MANAGER, kind + "Request", payload, None)
        self.now += 500 + int(self.rng.expovariate(1 / 2500))
        resp = self.emit(c, names.EDGE_NET, ch, kind + "Response", response, None)
        self.load[b] = max(0, backlog - 1)
        done = ('{"@":"ChannelRequestCompleted","broker_id":' + str(b) + ',"request_type":"' + kind
                + '","enqueued_ms":' + repr(enq_ms) + ',"sent_ms":' + repr(sent_ms) + ',"completed_ms":'
                + repr(self.ms()) + ',"attempts":' + str(attempts) + ',"error":"' + error + '","queue_size":'
                + str(backlog) + "}")
        self.emit(c, ch, names.METRICS, "ChannelRequestCompleted", done, resp)
        if kind == "LeaderAndIsr" and not stale:
            fwd = self.emit(c, ch, names.CONTROLLER, "LeaderAndIsrResponse", response, resp)
            self.pending_events.append((self.now, "LeaderAndIsrResponseReceived", "LeaderAndIsrResponseReceived",
                                        fwd))
        elif kind == "StopReplica" and not stale:
            fwd = self.emit(c, ch, names.CONTROLLER, "StopReplicaResponse", response, resp)
            self.pending_events.append((self.now, "TopicDeletionStopReplicaResponseReceived", "TopicDeletion", fwd))

    def lair_response(self, parts: list[int]) -> str:
        errs = []
        for i in parts:
            e = NONE
            if self.rng.random() < 0.002:
                e = _err(self.rng.choice(("KAFKA_STORAGE_ERROR", "FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER")))
            errs.append('{"@":"PartitionError","topic_partition":' + self.tp[i] + ',"error":' + e + "}")
        return '{"@":"LeaderAndIsrResponse","error":' + NONE + ',"partition_errors":[' + ",".join(errs) + "]}"

    def send_lair(self, cause: int, parts: list[int], to: list[int] | None = None, is_new: bool = False) -> None:
        """LeaderAndIsr to every live replica of ``parts`` (or to ``to``), chunked."""
        per_broker: dict[int, list[int]] = {}
        for i in parts:
            for r in self.replicas[i]:
                if r in self.alive and (to is None or r in to):
                    per_broker.setdefault(r, []).append(i)
        leaders = sorted({self.leader[i] for i in parts if self.leader[i] >= 0})
        live_leaders = ",".join(self.broker_json[b] for b in leaders)
        for b in sorted(per_broker):
            ps = per_broker[b]
            self.load[b] += (len(ps) - 1) // MAX_STATES_PER_REQUEST + 1
            for k in range(0, len(ps), MAX_STATES_PER_REQUEST):
                chunk = ps[k:k + MAX_STATES_PER_REQUEST]
                payload = ('{"@":"LeaderAndIsrRequest","controller_id":' + str(self.controller)
                           + ',"controller_epoch":' + str(self.cepoch) + ',"broker_epoch":'
                           + str(self.broker_epoch[b]) + ',"partition_states":['
                           + ",".join(self.lair_state(i, is_new) for i in chunk) + '],"live_leaders":['
                           + live_leaders + "]" + PRINCIPAL + "}")
                self.request(cause, b, "LeaderAndIsr", payload, self.lair_response(chunk))

    def send_um(self, cause: int, parts: list[int], to: list[int] | None = None) -> None:
        live = ",".join(self.broker_json[b] for b in self.alive)
        chunks = [",".join(self.um_state(i) for i in parts[k:k + MAX_STATES_PER_REQUEST])
                  for k in range(0, max(1, len(parts)), MAX_STATES_PER_REQUEST)]
        head = '{"@":"UpdateMetadataRequest","controller_id":' + str(self.controller) + ',"controller_epoch":' + str(
            self.cepoch) + ',"broker_epoch":'
        response = '{"@":"UpdateMetadataResponse","error":' + NONE + "}"
        for b in list(to if to is not None else self.alive):
            self.load[b] += 1
            epoch = str(self.broker_epoch[b])
            for states in chunks:
                payload = head + epoch + ',"partition_states":[' + states + '],"live_brokers":[' + live + "]" \
                    + PRINCIPAL + "}"
                self.request(cause, b, "UpdateMetadata", payload, response)

    def send_stop(self, cause: int, b: int, parts: list[int], delete: bool) -> None:
        states = ",".join('{"@":"StopReplicaPartitionState","topic_partition":' + self.tp[i] + ',"leader_epoch":'
                          + str(self.epoch[i]) + ',"delete_partition":' + _b(delete) + "}" for i in parts)
        payload = ('{"@":"StopReplicaRequest","controller_id":' + str(self.controller) + ',"controller_epoch":'
                   + str(self.cepoch) + ',"broker_epoch":' + str(self.broker_epoch[b]) + ',"partition_states":['
                   + states + "]" + PRINCIPAL + "}")
        errs = ",".join('{"@":"PartitionError","topic_partition":' + self.tp[i] + ',"error":' + NONE + "}"
                        for i in parts)
        self.load[b] += 1
        self.request(cause, b, "StopReplica", payload,
                     '{"@":"StopReplicaResponse","error":' + NONE + ',"partition_errors":[' + errs + "]}")

    def gauges(self, cause: int) -> None:
        key = (self.cepoch, len(self.offline), len(self.imbalanced), len(self.deleted), len(self.deleting),
               len(self.urp))
        if key == self._gauges_key:
            self.emit(self.controller, names.CONTROLLER, names.METRICS, "ControllerGauges", self._gauges, cause)
            return
        self._gauges_key = key
        self._gauges = active = ('{"@":"ControllerGauges","active":true,"controller_epoch":' + str(self.cepoch)
                  + ',"offline_partitions":' + str(len(self.offline)) + ',"preferred_replica_imbalance":'
                  + str(len(self.imbalanced)) + ',"global_topics":' + str(len(self.topics) - len(self.deleted))
                  + ',"global_partitions":' + str(self.np) + ',"topics_to_delete":' + str(len(self.deleting))
                  + ',"replicas_to_delete":' + str(sum(len(self.topic_parts[t]) for t in self.deleting) * self.rf)
                  + ',"under_replicated_partitions":' + str(len(self.urp)) + "}")
        self.emit(self.controller, names.CONTROLLER, names.METRICS, "ControllerGauges", active, cause)

    def event(self, sender: str, input_type: str, input_payload: str, name: str, state: str, work) -> None:
        """An external input, the controller event it becomes, its work, then its timing record and gauges."""
        cause = self.emit(self.controller, sender, names.CONTROLLER, input_type, input_payload, None)
        self.run_event(cause, name, state, work, self.now)
        self.drain()

    def run_event(self, cause: int, name: str, state: str, work, enqueued_us: int) -> None:
        queue_size = len(self.pending_events)
        started_us = max(self.now, enqueued_us) + int(self.rng.expovariate(1 / 150))
        self.now = started_us
        if work is not None:
            work(cause)
        self.now += int(self.rng.expovariate(1 / 1200))
        if self.rng.random() < 0.0005:
            self.now += 2_000_000 + int(self.rng.random() * 3_000_000)  # a slow event (> 2 s)
        payload = ('{"@":"ControllerEventProcessed","event":"' + name + '","controller_state":"' + state
                   + '","enqueued_ms":' + repr(enqueued_us / 1000) + ',"started_ms":' + repr(started_us / 1000)
                   + ',"finished_ms":' + repr(self.now / 1000) + ',"queue_size":' + str(queue_size) + "}")
        self.emit(self.controller, names.CONTROLLER, names.METRICS, "ControllerEventProcessed", payload, cause)
        self.gauges(cause)

    def drain(self) -> None:
        while self.pending_events:
            enq, name, state, cause = self.pending_events.pop(0)
            self.run_event(cause, name, state, None, enq)

    # -- episodes -----------------------------------------------------------------------------------------------------
    def startup(self) -> None:
        for b in range(self.nb):
            self.emit(b, names.EDGE_ZK, "zk-bridge", "ZkSessionEvent",
                      '{"@":"ZkSessionEvent","state":"CONNECTED","session_id":' + str(72057594037927936 + b) + "}",
                      None)
        c = self.controller
        cause = self.emit(c, names.EDGE_ZK, names.CONTROLLER, "ZkWatchEvent",
                          _watch_event(paths.ControllerZNode, "DELETED"), None)
        self.emit(c, names.CONTROLLER, names.METRICS, "ControllerChanged",
                  '{"@":"ControllerChanged","broker_id":' + str(c) + ',"controller_epoch":' + str(self.cepoch)
                  + ',"active":true}', cause)

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.BrokerIdsZNode), self.get_data(paths.TopicsZNode)])
            parts = list(range(self.np))
            elections = [self.election(i, "InitialLeader") for i in parts[:200]]
            self.emit(c, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                      self.batch([self.pchange(i, "NewPartition", "OnlinePartition") for i in parts[:200]], [],
                                 elections), resp)
            self.send_um(resp, parts)
            self.send_lair(resp, parts)

        self.run_event(cause, "Startup", "ControllerChange", work, self.now)
        self.drain()

    def ep_isr_change(self) -> None:
        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.IsrChangeNotificationZNode)])
            changed = []
            # mostly lagging followers catching up (a batch of under-replicated partitions), now and then a shrink
            if self.urp and self.rng.random() < 0.8:
                picks = list(itertools.islice(iter(self.urp), 1 + int(self.rng.random() * 4 * MAX_STATES_PER_REQUEST)))
            else:
                picks = [int(self.rng.random() * self.np)]
            for i in picks:
                if self.leader[i] < 0:
                    continue
                missing = [r for r in self.replicas[i] if r in self.alive and r not in self.isr[i]]
                if missing:
                    self.isr[i] = self.isr[i] + missing[:1]
                elif len(self.isr[i]) > 1 and self.rng.random() < 0.3:
                    self.isr[i] = [r for r in self.isr[i] if r != self.isr[i][-1] or r == self.leader[i]]
                else:
                    continue
                self.zkv[i] += 1
                self.invalidate(i)
                (self.urp.add if len(self.isr[i]) < len(self.replicas[i]) else self.urp.discard)(i)
                changed.append(i)
            for i, target in list(self.reassigning.items()):
                if all(r in self.alive for r in target) and self.rng.random() < 0.5:
                    self.complete_reassignment(resp, i, target)
            if changed:
                self.send_um(resp, changed)

        self.event("edge:zk", "ZkWatchEvent", _watch_event(paths.IsrChangeNotificationZNode, "CHILD"),
                   "IsrChangeNotification", "IsrChange", work)

    def ep_auto_balance(self, manual: bool = False) -> None:
        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.TopicsZNode)])
            moved = [i for i in sorted(self.imbalanced)[:10]
                     if self.replicas[i][0] in self.alive and self.replicas[i][0] in self.isr[i]]
            if not moved:
                return
            for i in moved:
                self.set_state(i, self.replicas[i][0], self.isr[i])
            self.zk_roundtrip(resp, [self.set_partition_state(i) for i in moved], fenced=True)
            self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                      self.batch([self.pchange(i, "OnlinePartition", "OnlinePartition") for i in moved], [],
                                 [self.election(i, "PreferredReplicaPartition") for i in moved]), resp)
            self.send_lair(resp, moved)
            self.send_um(resp, moved)

        if manual:
            self.event("edge:zk", "ZkWatchEvent",
                       _watch_event(paths.PreferredReplicaElectionZNode, "CREATED"),
                       "ReplicaLeaderElection", "ManualLeaderBalance", work)
        else:
            self.event("edge:timer", "TimerFired", '{"@":"TimerFired","key":"auto-leader-rebalance-task"}',
                       "AutoPreferredReplicaLeaderElection", "AutoLeaderBalance", work)

    def ep_topic_change(self) -> None:
        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.TopicsZNode)])
            if not self.deleted:
                return
            topic = self.deleted.pop(0)
            parts = self.topic_parts[topic]
            pc, rc, el = [], [], []
            for i in parts:
                live = [r for r in self.replicas[i] if r in self.alive]
                self.epoch[i] = -1
                self.zkv[i] = 0
                self.invalidate(i)
                self.set_state(i, live[0] if live else -1, live)
                pc += [self.pchange(i, "NonExistentPartition", "NewPartition"),
                       self.pchange(i, "NewPartition", "OnlinePartition" if live else "OfflinePartition")]
                rc += [self.rchange(i, r, "NonExistentReplica", "NewReplica") for r in self.replicas[i]]
                rc += [self.rchange(i, r, "NewReplica", "OnlineReplica") for r in live]
                if live:
                    el.append(self.election(i, "InitialLeader"))
            self.zk_roundtrip(resp, [self.set_partition_state(i) for i in parts], fenced=True)
            self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                      self.batch(pc, rc, el), resp)
            self.send_lair(resp, parts, is_new=True)
            self.send_um(resp, parts)

        self.event("edge:zk", "ZkWatchEvent", _watch_event(paths.TopicsZNode, "CHILD"),
                   "TopicChange", "TopicChange", work)

    def deletion_progress(self, cause: int, topic: str, phase: str, reason: str = "") -> None:
        self.emit(self.controller, names.CONTROLLER, names.METRICS, "TopicDeletionProgress",
                  '{"@":"TopicDeletionProgress","topic":"' + topic + '","phase":"' + phase + '","reason":'
                  + json.dumps(reason) + "}", cause)

    def ep_topic_deletion(self) -> None:
        candidates = [t for t in self.topics if t not in self.deleting and t not in self.deleted
                      and not any(i in self.reassigning for i in self.topic_parts[t])]
        if len(candidates) < 2:
            return self.ep_isr_change()
        topic = candidates[int(self.rng.random() * len(candidates))]

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.DeleteTopicsZNode)])
            self.deleting[topic] = "Queued"
            self.deletion_progress(resp, topic, "Queued")
            self.resume_deletion(resp, topic)

        self.event("edge:zk", "ZkWatchEvent", _watch_event(paths.DeleteTopicsZNode, "CHILD"),
                   "TopicDeletion", "TopicDeletion", work)

    def resume_deletion(self, cause: int, topic: str) -> None:
        parts = self.topic_parts[topic]
        hosts = sorted({r for i in parts for r in self.replicas[i]})
        down = [b for b in hosts if b not in self.alive]
        if down:
            if self.deleting[topic] != "Ineligible":
                self.deleting[topic] = "Ineligible"
                self.deletion_progress(cause, topic, "Ineligible", f"replicas on offline brokers {down}")
            return
        self.deleting[topic] = "Started"
        self.deletion_progress(cause, topic, "Started")
        rc = []
        for i in parts:
            for r in self.replicas[i]:
                rc += [self.rchange(i, r, "OnlineReplica", "OfflineReplica"),
                       self.rchange(i, r, "OfflineReplica", "ReplicaDeletionStarted")]
        self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch", self.batch([], rc, []),
                  cause)
        for b in hosts:
            self.send_stop(cause, b, [i for i in parts if b in self.replicas[i]], True)
        rc = []
        for i in parts:
            for r in self.replicas[i]:
                rc += [self.rchange(i, r, "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
                       self.rchange(i, r, "ReplicaDeletionSuccessful", "NonExistentReplica")]
        pc = [self.pchange(i, self.partition_state(i), "OfflinePartition") for i in parts]
        pc += [self.pchange(i, "OfflinePartition", "NonExistentPartition") for i in parts]
        self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch", self.batch(pc, rc, []),
                  cause)
        self.zk_roundtrip(cause, ['{"@":"Delete","path":' + json.dumps(paths.TopicZNode.path(topic))
                                  + ',"version":-1,"recursive":true}'], fenced=True)
        for i in parts:
            self.offline.discard(i)
            self.urp.discard(i)
            self.imbalanced.discard(i)
        del self.deleting[topic]
        self.deleted.append(topic)
        self.deletion_progress(cause, topic, "Completed")

    def partition_state(self, i: int) -> str:
        return "OfflinePartition" if self.leader[i] < 0 else "OnlinePartition"

    def ep_reassignment(self) -> None:
        busy = {i for t in list(self.deleting) + self.deleted for i in self.topic_parts[t]}
        picks = []
        for _ in range(1 + int(self.rng.random() * 3)):
            i = int(self.rng.random() * self.np)
            if i not in busy and i not in self.reassigning and i not in picks and self.leader[i] >= 0:
                picks.append(i)
        if not picks or self.nb < 2:
            return self.ep_isr_change()

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.ReassignPartitionsZNode)])
            for i in picks:
                pool = self.alive if len(self.alive) >= self.rf else list(range(self.nb))
                target = self.rng.sample(sorted(pool), min(self.rf, len(pool)))
                dropped = self.rng.random() < 0.05
                phase = "Dropped" if dropped else "Started"
                self.emit(self.controller, names.CONTROLLER, names.METRICS, "ReassignmentProgress",
                          '{"@":"ReassignmentProgress","topic_partition":' + self.tp[i] + ',"phase":"' + phase
                          + '","target_replicas":' + _ints(target) + ',"reason":'
                          + json.dumps("invalid replica assignment" if dropped else "") + "}", resp)
                if dropped:
                    continue
                self.reassigning[i] = target
                adding = [r for r in target if r not in self.replicas[i]]
                if adding:
                    self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                              self.batch([], [self.rchange(i, r, "NonExistentReplica", "NewReplica") for r in adding],
                                         []), resp)
                self.send_lair(resp, [i])

        self.event("edge:zk", "ZkWatchEvent",
                   _watch_event(paths.ReassignPartitionsZNode, "CREATED"),
                   "ZkPartitionReassignment", "AlterPartitionReassignment", work)

    def complete_reassignment(self, cause: int, i: int, target: list[int]) -> None:
        old = self.replicas[i]
        removing = [r for r in old if r not in target]
        adding = [r for r in target if r not in old]
        rc = [self.rchange(i, r, "NewReplica", "OnlineReplica") for r in adding]
        el = []
        self.replicas[i] = list(target)
        self.invalidate(i)
        live_target = [r for r in target if r in self.alive]
        if self.leader[i] not in target:
            self.set_state(i, live_target[0] if live_target else -1, live_target)
            el.append(self.election(i, "ReassignPartition"))
        else:
            self.set_state(i, self.leader[i], live_target)
        for r in removing:
            rc += [self.rchange(i, r, "OnlineReplica", "OfflineReplica"),
                   self.rchange(i, r, "OfflineReplica", "ReplicaDeletionStarted"),
                   self.rchange(i, r, "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
                   self.rchange(i, r, "ReplicaDeletionSuccessful", "NonExistentReplica")]
        self.zk_roundtrip(cause, [self.set_partition_state(i)], fenced=True)
        self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                  self.batch([self.pchange(i, "OnlinePartition", "OnlinePartition")] if el else [], rc, el), cause)
        self.send_lair(cause, [i])
        for r in removing:
            if r in self.alive:
                self.send_stop(cause, r, [i], True)
        del self.reassigning[i]
        self.emit(self.controller, names.CONTROLLER, names.METRICS, "ReassignmentProgress",
                  '{"@":"ReassignmentProgress","topic_partition":' + self.tp[i] + ',"phase":"Completed",'
                  '"target_replicas":' + _ints(target) + ',"reason":""}', cause)

    def live_partitions(self) -> list[int]:
        if not self.deleted:
            return list(range(self.np))
        gone = {i for t in self.deleted for i in self.topic_parts[t]}
        return [i for i in range(self.np) if i not in gone]

    def broker_down(self, b: int) -> None:
        """BrokerChange: broker b is gone; elect new leaders for what it led (clean, or unclean when no ISR
        member is alive and the coin says the topic allows it)."""
        if b == self.controller:
            self.failover()
        self.alive.remove(b)
        self.dead.append(b)
        self.invalidate()
        self.load[b] = 0

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [_get_children(paths.BrokerIdsZNode)])
            parts = [i for i in self.live_partitions() if b in self.replicas[i]]
            led = [i for i in parts if self.leader[i] == b]
            pc, rc, el = [], [], []
            for i in parts:
                rc.append(self.rchange(i, b, "OnlineReplica", "OfflineReplica"))
            for i in led:
                isr = [r for r in self.isr[i] if r != b and r in self.alive]
                if self.rng.random() < 0.08:  # the ISR had shrunk to the failed leader alone
                    isr = []
                pc.append(self.pchange(i, "OnlinePartition", "OfflinePartition"))
                if isr:
                    self.set_state(i, isr[0], isr)
                    pc.append(self.pchange(i, "OfflinePartition", "OnlinePartition"))
                    el.append(self.election(i, "OfflinePartition"))
                else:
                    live = [r for r in self.replicas[i] if r in self.alive]
                    if live and self.rng.random() < 0.5:
                        self.set_state(i, live[0], [live[0]])
                        pc.append(self.pchange(i, "OfflinePartition", "OnlinePartition"))
                        el.append(self.election(i, "OfflinePartition", unclean=True))
                    else:
                        self.set_state(i, -1, [b])
            for i in parts:
                if i not in led and b in self.isr[i]:
                    self.set_state(i, self.leader[i], [r for r in self.isr[i] if r != b])
            if parts:
                self.zk_roundtrip(resp, [self.set_partition_state(i) for i in led[:50] or parts[:1]], fenced=True)
                self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                          self.batch(pc, rc, el), resp)
                self.send_lair(resp, led)
            self.send_um(resp, led)

        self.event("edge:zk", "ZkWatchEvent", _watch_event(paths.BrokerIdsZNode, "CHILD"),
                   "BrokerChange", "BrokerChange", work)

    def ep_broker_failure(self) -> None:
        if len(self.dead) >= max(1, self.nb // 2) or self.nb < 2:
            return self.ep_isr_change()
        others = [b for b in self.alive if b != self.controller]
        # the controller's own broker fails now and then (a fail-over); usually another one does
        victim = self.controller if not others or self.rng.random() < 0.05 else self.rng.choice(others)
        self.broker_down(victim)

    def ep_controlled_shutdown(self) -> None:
        candidates = [b for b in self.alive if b != self.controller]
        if not candidates or len(self.dead) >= max(1, self.nb // 2):
            return self.ep_isr_change()
        b = self.rng.choice(candidates)
        moved: list[int] = []

        def work(cause: int) -> None:
            led = [i for i in self.live_partitions() if self.leader[i] == b]
            el, pc = [], []
            for i in led:
                isr = [r for r in self.isr[i] if r != b and r in self.alive]
                if isr:
                    self.set_state(i, isr[0], isr)
                    moved.append(i)
                    pc.append(self.pchange(i, "OnlinePartition", "OnlinePartition"))
                    el.append(self.election(i, "ControlledShutdownPartition"))
            if moved:
                self.zk_roundtrip(cause, [self.set_partition_state(i) for i in moved[:50]], fenced=True)
                self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                          self.batch(pc, [], el), cause)
                self.send_lair(cause, moved)
            follower = [i for i in self.live_partitions() if b in self.replicas[i] and self.leader[i] != b]
            if follower:
                self.send_stop(cause, b, follower[:MAX_STATES_PER_REQUEST], False)
            remaining = [i for i in led if self.leader[i] == b]
            self.emit(b, names.EDGE_NET, "broker-lifecycle", "ControlledShutdownResponse",
                      '{"@":"ControlledShutdownResponse","error":' + NONE + ',"remaining_partitions":['
                      + ",".join(self.tp[i] for i in remaining) + "]}", None)

        self.event("edge:net", "ControlledShutdownRequest",
                   '{"@":"ControlledShutdownRequest","broker_id":' + str(b) + ',"broker_epoch":'
                   + str(self.broker_epoch[b]) + PRINCIPAL + "}", "ControlledShutdown", "ControlledShutdown", work)
        self.broker_down(b)

    def ep_broker_restart(self) -> None:
        if not self.dead:
            return self.ep_isr_change()
        b = self.dead.pop(0)
        self.invalidate()
        self.alive.append(b)
        self.alive.sort()
        self.broker_epoch[b] += 1000 + int(self.rng.random() * 1000)
        self.broker_json[b] = self._broker_json(b)
        cause = self.emit(b, names.EDGE_ZK, "zk-bridge", "ZkSessionEvent",
                          '{"@":"ZkSessionEvent","state":"CONNECTED","session_id":' + str(72057594037927936 + b)
                          + "}", None)
        reg = json.dumps(znodes.encode_broker(Broker(b, (EndPoint("127.0.0.1", 9092 + b),)), timestamp_ms=0))
        self.emit(b, "broker-lifecycle", "zk-bridge", "ZkRequest",
                  '{"@":"ZkRequest","request_id":1,"batch":{"@":"ZkBatch","ops":[{"@":"RegisterBroker","path":'
                  + json.dumps(paths.BrokerIdZNode.path(b)) + ',"data":' + reg + '}],"fence_version":-1},"reply_to":'
                  '"broker-lifecycle"}', cause)

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [_get_children(paths.BrokerIdsZNode)])
            parts = [i for i in self.live_partitions() if b in self.replicas[i]]
            rc = [self.rchange(i, b, "OfflineReplica", "OnlineReplica") for i in parts]
            pc, el = [], []
            for i in parts:
                if self.leader[i] < 0:
                    self.set_state(i, b, [b])
                    pc.append(self.pchange(i, "OfflinePartition", "OnlinePartition"))
                    el.append(self.election(i, "OfflinePartition"))
            self.emit(self.controller, names.CONTROLLER, names.STATE_CHANGE_LOG, "StateChangeBatch",
                      self.batch(pc, rc, el), resp)
            self.send_um(resp, [])  # the live brokers learn of the new one
            self.send_um(resp, parts, to=[b])  # and the new one gets the metadata of its partitions
            self.send_lair(resp, parts, to=[b])
            back_online = [i for i in parts if self.leader[i] == b and len(self.isr[i]) == 1]
            if back_online:
                self.send_lair(resp, back_online, to=[r for r in self.alive if r != b])
            for t in list(self.deleting):
                if self.deleting[t] == "Ineligible":
                    self.resume_deletion(resp, t)

        self.event("edge:zk", "ZkWatchEvent", _watch_event(paths.BrokerIdsZNode, "CHILD"),
                   "BrokerChange", "BrokerChange", work)

    def failover(self) -> None:
        """The controller moves to another live broker; the old one resigns, and (sometimes) its last request,
        sent with the old epoch, is rejected with STALE_CONTROLLER_EPOCH."""
        old = self.controller
        candidates = [b for b in self.alive if b != old]
        if not candidates:
            return
        new = self.rng.choice(candidates)
        if self.rng.random() < 0.5:
            i = self.live_partitions()[0]
            target = candidates[0]
            payload = ('{"@":"LeaderAndIsrRequest","controller_id":' + str(old) + ',"controller_epoch":'
                       + str(self.cepoch) + ',"broker_epoch":' + str(self.broker_epoch[target])
                       + ',"partition_states":[' + self.lair_state(i) + '],"live_leaders":[]' + PRINCIPAL + "}")
            cause = self.emit(old, names.EDGE_TIMER, names.CONTROLLER, "TimerFired",
                              '{"@":"TimerFired","key":"auto-leader-rebalance-task"}', None)
            self.request(cause, target, "LeaderAndIsr", payload,
                         '{"@":"LeaderAndIsrResponse","error":' + _err("STALE_CONTROLLER_EPOCH")
                         + ',"partition_errors":[]}', error="STALE_CONTROLLER_EPOCH", stale=True)
        cause = self.emit(old, names.EDGE_ZK, names.CONTROLLER, "ZkWatchEvent",
                          _watch_event(paths.ControllerZNode, "CHANGED"), None)
        self.emit(old, names.CONTROLLER, names.METRICS, "ControllerChanged",
                  '{"@":"ControllerChanged","broker_id":' + str(old) + ',"controller_epoch":-1,"active":false}', cause)
        self.emit(old, names.CONTROLLER, names.METRICS, "ControllerGauges",
                  '{"@":"ControllerGauges","active":false,"controller_epoch":0,"offline_partitions":0,'
                  '"preferred_replica_imbalance":0,"global_topics":0,"global_partitions":0,"topics_to_delete":0,'
                  '"replicas_to_delete":0,"under_replicated_partitions":0}', cause)
        self.pending_events.clear()
        self.controller = new
        self.cepoch += 1
        self.invalidate()
        cause = self.emit(new, names.EDGE_ZK, names.CONTROLLER, "ZkWatchEvent",
                          _watch_event(paths.ControllerZNode, "DELETED"), None)
        self.emit(new, names.CONTROLLER, names.METRICS, "ControllerChanged",
                  '{"@":"ControllerChanged","broker_id":' + str(new) + ',"controller_epoch":' + str(self.cepoch)
                  + ',"active":true}', cause)

        def work(cause: int) -> None:
            resp = self.zk_roundtrip(cause, [self.get_data(paths.BrokerIdsZNode), self.get_data(paths.TopicsZNode),
                                             self.get_data(paths.DeleteTopicsZNode)])
            parts = self.live_partitions()
            self.now += int(self.rng.random() * 1_500_000)  # loading the whole context from ZooKeeper
            self.send_um(resp, parts)
            self.send_lair(resp, parts)

        self.run_event(cause, "Reelect", "ControllerChange", work, self.now)

    def run(self) -> None:
        self.startup()
        episodes = (
            (0.45, self.ep_isr_change),
            (0.62, self.ep_auto_balance),
            (0.72, self.ep_topic_change),
            (0.74, lambda: self.ep_auto_balance(manual=True)),
            (0.86, self.ep_reassignment),
            (0.93, self.ep_topic_deletion),
            (0.9345, self.ep_broker_failure),
            (0.9405, self.ep_broker_restart),
            (0.9420, self.ep_controlled_shutdown),
            (0.9423, lambda: (self.failover(), self.drain())),
        )
        while True:
            self.now += int(self.rng.expovariate(1 / 40_000))
            if self.dead and self.rng.random() < 0.03:  # a failed broker comes back within a few seconds
                self.ep_broker_restart()
                continue
            x = self.rng.random()
            for threshold, ep in episodes:
                if x < threshold:
                    ep()
                    break
            else:
                self.ep_isr_change()


def generate(out_dir: str, messages: int, brokers: int = 3, partitions: int = 100, seed: int = 0) -> GenerateStats:
    """Write broker-<id>.jsonl for each broker into ``out_dir``: ``messages`` record lines in all."""
    import time

    t0 = time.monotonic()
    g = Generator(messages, brokers, partitions, seed)
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"broker-{b}.jsonl") for b in range(brokers)]
    for b, path in enumerate(paths):
        f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        header = {"trace_version": TRACE_VERSION, "process": f"broker-{b}", "started_ms": float(BASE_MS),
                  "broker_id": b,
                  "config": {"broker.id": b, "zookeeper.connect": "127.0.0.1:2181", "listeners":
                             f"PLAINTEXT://127.0.0.1:{9092 + b}"},
                  "kactor": _version(),
                  "synthetic": {"seed": seed, "messages": messages, "brokers": brokers, "partitions": partitions}}
        f.write(json.dumps(header, separators=(",", ":")) + "\n")
        g.files.append(f)
    try:
        g.run()
    except _LimitReachedError:
        pass
    finally:
        for f, buf in zip(g.files, g.bufs, strict=True):
            f.write("".join(buf))
            f.close()
    return GenerateStats(g.count, paths, partitions, len(g.topics), time.monotonic() - t0)


def _version() -> str:
    from messages.version import __version__

    return __version__
