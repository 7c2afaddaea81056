"""The detectors: one pass over a trace's records in time order (``detect``), pure."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from actors import names
from kactor.trace.incidents.errors import ATTENTION_ERRORS, EXPECTED_ERRORS
from kactor.trace.incidents.model import LATE_PRODUCE_MS, ErrorCount, Findings, Incident, ProcessRun, Rec
from protocol.zk import paths

# a process whose trace ends this long before the last record of the run ended while the cluster went on
ENDED_BEFORE_MS = 1000.0
# ISR changes of the same kind, brokers and writer within this window are one incident
ISR_GROUP_MS = 1000.0

_STATE_PATH = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")
_BROKER_PATH = re.compile(rf"^{re.escape(paths.BrokerIdsZNode)}/(\d+)$")


def tp_name(tp: Any) -> str:
    return f"{tp['topic']}-{tp['partition']}"


def _topic_of(tp: str) -> str:
    return tp.rsplit("-", 1)[0]


def _errors_in(value: Any, out: list[str]) -> None:
    """Every Errors value other than NONE anywhere in a payload."""
    if isinstance(value, dict):
        if value.get("@e") == "Errors":
            if value.get("v") != "NONE":
                out.append(value.get("v"))
            return
        for v in value.values():
            _errors_in(v, out)
    elif isinstance(value, list):
        for v in value:
            _errors_in(v, out)


def _writes(ops: list[Any]) -> list[tuple[tuple[int, ...], str, dict[str, Any]]]:
    """The state-znode writes of a ZkBatch's ops: (index path into the results, partition, data)."""
    found = []
    for i, op in enumerate(ops):
        if op.get("@") == "Multi":
            found += [((i, *idx), tp, data) for idx, tp, data in _writes(op.get("ops", []))]
        elif op.get("@") in ("SetData", "Create") and (m := _STATE_PATH.match(op.get("path", ""))):
            try:
                data = json.loads(op.get("data") or "")
            except (TypeError, ValueError):
                continue
            found.append(((i,), f"{m.group(1)}-{m.group(2)}", data))
    return found


def _result_ok(results: list[Any], idx: tuple[int, ...]) -> bool:
    r: Any = {"results": results}
    for i in idx:
        rs = r.get("results") or []
        if i >= len(rs):
            return False
        r = rs[i]
    return r.get("code") == "OK"


def _member(member_id: str) -> str:
    """A member id without most of its UUID: client id and 8 hex digits (``consumer-1-3f2a…``)."""
    return member_id[:-28] if len(member_id) > 36 and member_id[-37] == "-" else member_id


def _fmt_brokers(bs: Iterable[int]) -> str:
    bs = sorted(bs)
    return ("broker " if len(bs) == 1 else "brokers ") + ", ".join(map(str, bs))


@attrs.define
class _Detector:
    runs: Sequence[ProcessRun]
    late_produce_ms: float
    end_ms: float
    incidents: list[Incident] = attrs.field(factory=list)
    replicas: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    leader: dict[str, int] = attrs.field(factory=dict)
    isr: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    pending_zk: dict[tuple[str, str, int], tuple[str, list[Any]]] = attrs.field(factory=dict)
    # partition -> (since, why) while it has no live leader
    offline: dict[str, tuple[float, str]] = attrs.field(factory=dict)
    offline_spans: list[tuple[str, float, float | None, str]] = attrs.field(factory=list)
    # partition -> (since, missing replicas) while under-replicated
    under: dict[str, tuple[float, frozenset[int]]] = attrs.field(factory=dict)
    under_spans: list[tuple[str, float, float | None, frozenset[int]]] = attrs.field(factory=list)
    isr_changes: list[tuple[str, float, str, tuple[int, ...], str, str]] = attrs.field(factory=list)
    dead: dict[int, tuple[float, str]] = attrs.field(factory=dict)  # broker -> (died at, how), while down
    vanished: list[tuple[float, int]] = attrs.field(factory=list)  # /brokers/ids/<id> DELETED watches
    elections: dict[str, list[tuple[float, str, int]]] = attrs.field(factory=dict)
    deleting: set[str] = attrs.field(factory=set)  # topics queued for deletion: their partitions go offline
    stopping_ms: float | None = None  # the cluster's own stop at the end: every broker shuts down in order
    controllers: list[tuple[float, int, int, str]] = attrs.field(factory=list)  # ts, broker, epoch, process
    resigned: dict[int, float] = attrs.field(factory=dict)
    controller_deleted: list[float] = attrs.field(factory=list)
    produce: dict[tuple[str, int, int], tuple[float, int, tuple[str, ...]]] = attrs.field(factory=dict)
    late: list[tuple[str, float, float, int, tuple[str, ...]]] = attrs.field(factory=list)
    deletions: dict[str, dict[str, float]] = attrs.field(factory=dict)
    reassigning: dict[str, tuple[float, tuple[int, ...]]] = attrs.field(factory=dict)
    reassigned: set[str] = attrs.field(factory=set)
    errors: dict[tuple[str, str], list[float]] = attrs.field(factory=dict)
    # group -> its rebalance in progress: (first JoinGroup's arrival, process), its last generation's members and
    # process, the members that left with a LeaveGroup
    joining: dict[str, tuple[float, str]] = attrs.field(factory=dict)
    generations: dict[str, tuple[int, frozenset[str], str]] = attrs.field(factory=dict)
    leaving: dict[str, set[str]] = attrs.field(factory=dict)
    join_requests: dict[tuple[str, int, int], str] = attrs.field(factory=dict)

    def broker_of(self, process: str) -> int | None:
        for r in self.runs:
            if r.process == process:
                return r.broker_id
        return None

    # -- partition state ----------------------------------------------------------------------------------------
    def quiet(self, tp: str, ts: float) -> bool:
        """A change that is part of a deletion or of the cluster's final stop, not an incident."""
        return _topic_of(tp) in self.deleting or (self.stopping_ms is not None and ts >= self.stopping_ms)

    def set_state(self, tp: str, ts: float, leader: int, isr: tuple[int, ...], writer: str) -> None:
        old_isr = self.isr.get(tp)
        self.leader[tp] = leader
        self.isr[tp] = isr
        if self.quiet(tp, ts):
            self.end_offline(tp, ts)
            self.check_under(tp, ts)
            return
        if old_isr is not None and set(old_isr) != set(isr):
            removed = tuple(sorted(set(old_isr) - set(isr)))
            added = tuple(sorted(set(isr) - set(old_isr)))
            if removed:
                self.isr_changes.append(("isr_shrink", ts, tp, removed, writer, self.shrink_reason(tp, ts, removed,
                                                                                                    writer)))
            if added:
                self.isr_changes.append(("isr_expand", ts, tp, added, writer, "caught up"))
        if leader >= 0 and leader not in self.dead:
            self.end_offline(tp, ts)
        elif leader < 0 and tp not in self.offline:
            self.offline[tp] = (ts, "the controller found no live replica in the ISR to lead (leader −1)")
        self.check_under(tp, ts)

    def shrink_reason(self, tp: str, ts: float, removed: tuple[int, ...], writer: str) -> str:
        """Why ``removed`` left the ISR of ``tp`` (Kafka's Partition.maybeShrinkIsr at a leader; at the controller
        its replica state machine's OfflineReplica, a reassignment or a controlled shutdown)."""
        if writer.startswith("the leader"):
            return "out of sync longer than replica.lag.time.max.ms"
        if all(b in self.dead for b in removed):
            return "offline"
        if any(r.broker_id in removed and r.shutdown_ts is not None and r.shutdown_ts <= ts <= r.last_ts
               for r in self.runs):
            return "controlled shutdown"
        if tp in self.reassigning or tp in self.reassigned:
            return "reassignment"
        return "removed by the controller"

    def check_under(self, tp: str, ts: float) -> None:
        replicas, isr = self.replicas.get(tp), self.isr.get(tp)
        missing = frozenset(replicas) - frozenset(isr) if replicas is not None and isr is not None else frozenset()
        if self.quiet(tp, ts):
            missing = frozenset()
        now = self.under.get(tp)
        if now is not None and now[1] != missing:
            self.under_spans.append((tp, now[0], ts, now[1]))
            del self.under[tp]
            now = None
        if missing and now is None:
            self.under[tp] = (ts, missing)

    def end_offline(self, tp: str, ts: float) -> None:
        if tp in self.offline:
            since, why = self.offline.pop(tp)
            self.offline_spans.append((tp, since, ts, why))

    # -- records ------------------------------------------------------------------------------------------------
    def on(self, r: Rec) -> None:
        handler = getattr(self, f"on_{r.type}", None)
        if handler is not None:
            handler(r)

    def on_death(self, run: ProcessRun) -> None:
        """``run``'s process ended while the cluster went on: its leaderships are lost until an election."""
        b = run.broker_id
        if b is None:
            return
        how = "stopped (orderly shutdown)" if run.orderly else "killed (its trace ends without a shutdown: " \
                                                                "SIGKILL or a crash)"
        self.dead[b] = (run.last_ts, how)
        if self.stopping_ms is not None and run.last_ts >= self.stopping_ms:
            return  # the cluster's own stop: the last brokers' leaderships end with it
        for tp, leader in self.leader.items():
            if leader == b and tp not in self.offline:
                self.offline[tp] = (run.last_ts, f"its leader, broker {b}, was {how}")

    def on_start(self, run: ProcessRun) -> None:
        if run.broker_id is not None:
            self.dead.pop(run.broker_id, None)

    def vanished_after(self, broker: int, since: float) -> float | None:
        """When the registration of ``broker`` vanished from /brokers/ids after ``since``."""
        return min((t for t, b in self.vanished if b == broker and t >= since), default=None)

    def on_NetRequest(self, r: Rec) -> None:  # noqa: N802 - named after the record type
        body = r.payload.get("body") or {}
        kind = body.get("@")
        if kind == "LeaderAndIsrRequest":
            for st in body.get("partition_states", []):
                tp = tp_name(st["topic_partition"])
                adding = set(st.get("adding_replicas") or ())
                self.replicas[tp] = tuple(b for b in st.get("replicas", ()) if b not in adding)
                if tp not in self.isr:  # a partition whose state znode was written before the trace began
                    self.leader[tp] = st.get("leader", -1)
                    self.isr[tp] = tuple(st.get("isr", ()))
                self.check_under(tp, r.ts)
        elif kind == "JoinGroupRequest":
            self.joining.setdefault(body.get("group_id", ""), (r.ts, r.process))
            self.join_requests[(r.process, r.payload.get("connection_id"), r.payload.get("request_id"))] = \
                body.get("group_id", "")
        elif kind == "LeaveGroupRequest":
            gone = self.leaving.setdefault(body.get("group_id", ""), set())
            gone.update(m.get("member_id", "") for m in body.get("members", []))
        elif kind == "ProduceRequest" and r.payload.get("reply_expected", True):
            tps = tuple(sorted({tp_name(p["tp"]) for p in body.get("partitions", [])}))
            key = (r.process, r.payload.get("connection_id"), r.payload.get("request_id"))
            self.produce[key] = (r.ts, int(body.get("acks", 1)), tps)

    def on_NetReply(self, r: Rec) -> None:  # noqa: N802
        body = r.payload.get("body") or {}
        kind = str(body.get("@", "?"))
        errs: list[str] = []
        _errors_in(body, errs)
        for e in sorted(set(errs)):
            counts = self.errors.setdefault((e, kind.removesuffix("Response")), [0, 0, r.ts, r.ts])
            counts[0] += 1
            counts[1] += errs.count(e)
            counts[3] = r.ts
        if kind == "JoinGroupResponse":
            if body.get("members") and errs == []:
                self.rebalanced(r, body)
            else:  # a follower's answer, or an error: the join goes on
                self.join_requests.pop((r.process, r.payload.get("connection_id"), r.payload.get("request_id")), None)
        if kind == "ProduceResponse":
            key = (r.process, r.payload.get("connection_id"), r.payload.get("request_id"))
            if (asked := self.produce.pop(key, None)) is not None:
                arrived, acks, tps = asked
                if r.ts - arrived > self.late_produce_ms:
                    self.late.append((r.process, arrived, r.ts, acks, tps))

    def rebalanced(self, r: Rec, body: dict[str, Any]) -> None:
        """The group leader's JoinGroup answer: the join phase of a generation is over (Kafka's
        GroupCoordinator.onCompleteJoin); why it began, from the members that came and went."""
        generation = int(body.get("generation_id", -1))
        members = frozenset(m.get("member_id", "") for m in body.get("members", []))
        group = self.join_requests.pop((r.process, r.payload.get("connection_id"), r.payload.get("request_id")), None)
        if group is None or group not in self.joining:
            return
        since, _ = self.joining.pop(group)
        before = self.generations.get(group)
        self.generations[group] = (generation, members, r.process)
        if before is None:
            why = f"the group formed: {len(members)} member{'s' if len(members) != 1 else ''}"
        else:
            joined, left = members - before[1], before[1] - members
            left_in_order = left & self.leaving.pop(group, set())
            causes = []
            if before[2] != r.process:
                causes.append(f"its coordinator moved to broker {self.broker_of(r.process)}")
            if joined:
                causes.append(f"joined: {', '.join(sorted(map(_member, joined)))}")
            if left_in_order:
                causes.append(f"left (LeaveGroup): {', '.join(sorted(map(_member, left_in_order)))}")
            if left - left_in_order:
                causes.append(f"left without a LeaveGroup (session.timeout.ms passed or the member was replaced): "
                              f"{', '.join(sorted(map(_member, left - left_in_order)))}")
            why = "; ".join(causes) or "the members rejoined (a member's metadata or subscription changed)"
        self.incidents.append(Incident("group_rebalance", since, r.ts, f"group {group}",
                                       f"generation {generation}, {len(members)} member"
                                       f"{'s' if len(members) != 1 else ''}: {why}"))

    def on_ZkRequest(self, r: Rec) -> None:  # noqa: N802
        writes = _writes((r.payload.get("batch") or {}).get("ops", []))
        if writes:
            reply_to = r.payload.get("reply_to") or r.sender
            self.pending_zk[(r.process, reply_to, r.payload.get("request_id"))] = (r.sender, writes)

    def on_ZkResponse(self, r: Rec) -> None:  # noqa: N802
        asked = self.pending_zk.pop((r.process, r.receiver, r.payload.get("request_id")), None)
        if asked is None:
            return
        writer, writes = asked
        results = r.payload.get("results") or []
        for idx, tp, data in writes:
            if _result_ok(results, idx):
                who = "the controller" if writer == names.CONTROLLER else \
                    f"the leader, broker {self.broker_of(r.process)}"
                self.set_state(tp, r.ts, int(data.get("leader", -1)), tuple(data.get("isr", ())), who)

    def on_ZkWatchEvent(self, r: Rec) -> None:  # noqa: N802
        path, kind = r.payload.get("path", ""), r.payload.get("kind")
        if kind == "DELETED" and (m := _BROKER_PATH.match(path)):
            self.vanished.append((r.ts, int(m.group(1))))
        elif kind == "DELETED" and path == paths.ControllerZNode:
            self.controller_deleted.append(r.ts)

    def on_StateChangeBatch(self, r: Rec) -> None:  # noqa: N802
        for e in r.payload.get("elections", []):
            tp = tp_name(e["topic_partition"])
            strategy = e.get("strategy", "?") + (" (unclean)" if e.get("unclean") else "")
            self.elections.setdefault(tp, []).append((r.ts, strategy, e.get("leader", -1)))

    def on_ControllerChanged(self, r: Rec) -> None:  # noqa: N802
        b, epoch = r.payload.get("broker_id"), r.payload.get("controller_epoch")
        if r.payload.get("active"):
            if not any(c[1] == b and c[2] == epoch for c in self.controllers):
                self.controllers.append((r.ts, b, epoch, r.process))
        else:
            self.resigned[b] = r.ts

    def on_TopicDeletionProgress(self, r: Rec) -> None:  # noqa: N802
        topic, phase = r.payload.get("topic"), r.payload.get("phase")
        d = self.deletions.setdefault(topic, {})
        d.setdefault(phase, r.ts)
        self.deleting.add(topic)
        if phase == "Completed":
            self.incidents.append(Incident(
                "topic_deletion", d.get("Queued", d.get("Started", r.ts)), r.ts, f"topic {topic}",
                "deleted (queued → completed; ineligible for a while: a replica was offline)"
                if "Ineligible" in d else "deleted (queued → completed)"))
            del self.deletions[topic]
            self.deleting.discard(topic)
            for tp in [tp for tp in self.isr if _topic_of(tp) == topic]:
                self.end_offline(tp, r.ts)
                if tp in self.under:
                    since, missing = self.under.pop(tp)
                    self.under_spans.append((tp, since, r.ts, missing))
                for table in (self.isr, self.leader, self.replicas):
                    table.pop(tp, None)

    def on_ReassignmentProgress(self, r: Rec) -> None:  # noqa: N802
        tp, phase = tp_name(r.payload["topic_partition"]), r.payload.get("phase")
        target = tuple(r.payload.get("target_replicas") or ())
        if phase == "Started":
            self.reassigning.setdefault(tp, (r.ts, target))
        elif phase in ("Completed", "Dropped", "Cancelled") and tp in self.reassigning:
            since, started = self.reassigning.pop(tp)
            target = target if phase == "Cancelled" else started  # a cancelled one's replicas: its origin ones
            self.reassigned.add(tp)
            reason = r.payload.get("reason")
            self.incidents.append(Incident("reassignment", since, r.ts, tp,
                                           f"{phase.lower()}: replicas → {list(target)}"
                                           + (f" ({reason})" if reason else ""), (tp,)))

    # -- the end ------------------------------------------------------------------------------------------------
    def finish(self) -> list[Incident]:
        for tp, (since, why) in self.offline.items():
            self.offline_spans.append((tp, since, None, why))
        for tp, (since, missing) in self.under.items():
            self.under_spans.append((tp, since, None, missing))
        for topic, d in self.deletions.items():
            self.incidents.append(Incident("topic_deletion", min(d.values()), None, f"topic {topic}",
                                           f"not completed (phases seen: {', '.join(d)})"))
        for tp, (since, target) in self.reassigning.items():
            self.incidents.append(Incident("reassignment", since, None, tp,
                                           f"not completed: replicas → {list(target)}", (tp,)))
        self.offline_incidents()
        self.under_incidents()
        self.isr_incidents()
        self.controller_incidents()
        self.broker_incidents()
        self.stall_incidents()
        return sorted(self.incidents, key=lambda i: (i.start_ms, i.kind, i.subject))

    def offline_incidents(self) -> None:
        groups: dict[tuple[float, str], list[tuple[str, float | None]]] = {}
        for tp, since, until, why in self.offline_spans:
            groups.setdefault((since, why), []).append((tp, until))
        for (since, why), members in groups.items():
            ends = [u for _, u in members]
            end = None if any(u is None for u in ends) else max(e for e in ends if e is not None)
            tps = tuple(sorted(tp for tp, _ in members))
            broker = next((r.broker_id for r in self.runs if r.last_ts == since), None)
            parts = [why]
            if broker is not None and (gone := self.vanished_after(broker, since)) is not None:
                parts.append(f"its ZooKeeper registration vanished {(gone - since) / 1000:.2f} s later")
            firsts = [next((e for e in self.elections.get(tp, ()) if e[0] >= since), None) for tp in tps]
            elected = sorted({f"{e[1]} election → broker {e[2]}" for e in firsts if e is not None})
            if elected:
                parts.append("new leaders: " + "; ".join(elected))
            if end is None:
                parts.append("still without a leader at the end of the trace")
            self.incidents.append(Incident("partition_offline", since, end,
                                           f"{len(tps)} partition{'s' if len(tps) != 1 else ''}",
                                           "; ".join(parts), tps))

    def under_incidents(self) -> None:
        spans = sorted(self.under_spans, key=lambda s: (sorted(s[3]), s[1]))
        groups: list[list[tuple[str, float, float | None, frozenset[int]]]] = []
        for s in spans:
            g = groups[-1] if groups else None
            if g is not None and g[0][3] == s[3]:
                ends = [x[2] for x in g]
                g_end = None if None in ends else max(e for e in ends if e is not None)
                if g_end is None or s[1] <= g_end:
                    g.append(s)
                    continue
            groups.append([s])
        for g in groups:
            ends = [x[2] for x in g]
            end = None if None in ends else max(e for e in ends if e is not None)
            start = min(x[1] for x in g)
            tps = tuple(sorted({x[0] for x in g}))
            longest = max((x[2] - x[1]) for x in g if x[2] is not None) if any(x[2] is not None for x in g) \
                else None
            detail = f"{_fmt_brokers(g[0][3])} not in the ISR (ISR smaller than the replicas)"
            if longest is not None and len(tps) > 1:
                detail += f"; longest {longest / 1000:.2f} s"
            if end is None:
                detail += "; still under-replicated at the end of the trace"
            self.incidents.append(Incident("under_replicated", start, end,
                                           f"{len(tps)} partition{'s' if len(tps) != 1 else ''}", detail, tps))

    def isr_incidents(self) -> None:
        groups: list[list[tuple[str, float, str, tuple[int, ...], str, str]]] = []
        for c in sorted(self.isr_changes, key=lambda c: (c[0], c[3], c[4], c[5], c[1])):
            g = groups[-1] if groups else None
            if g is not None and (g[0][0], g[0][3], g[0][4], g[0][5]) == (c[0], c[3], c[4], c[5]) \
                    and c[1] - g[0][1] <= ISR_GROUP_MS:
                g.append(c)
            else:
                groups.append([c])
        for g in groups:
            kind, start, _, brokers, writer, why = g[0]
            tps = tuple(sorted({c[2] for c in g}))
            if kind == "isr_shrink":
                detail = f"{_fmt_brokers(brokers)} removed from the ISR by {writer} ({why})"
            else:
                detail = f"{_fmt_brokers(brokers)} back in the ISR ({why}), written by {writer}"
            self.incidents.append(Incident(kind, start, g[-1][1], f"{len(tps)} partition"
                                           f"{'s' if len(tps) != 1 else ''}", detail, tps))

    def controller_incidents(self) -> None:
        ordered = sorted(self.controllers)
        for i, (ts, b, epoch, _) in enumerate(ordered):
            prev = ordered[i - 1] if i > 0 else None
            start, cause = ts, "the first controller election of this trace"
            if prev is not None:
                pb = prev[1]
                death = next((r for r in self.runs if r.broker_id == pb and prev[0] <= r.last_ts <= ts
                              and r.last_ts < self.end_ms - ENDED_BEFORE_MS), None)
                deleted = [t for t in self.controller_deleted if prev[0] < t <= ts]
                if death is not None:
                    how = "stopped (orderly shutdown)" if death.orderly else "killed (no shutdown in its trace)"
                    start, cause = death.last_ts, f"the previous controller, broker {pb} (epoch {prev[2]}), was {how}"
                elif pb in self.resigned and prev[0] <= self.resigned[pb] <= ts:
                    start = self.resigned[pb]
                    cause = f"the previous controller, broker {pb} (epoch {prev[2]}), resigned"
                    if deleted:
                        cause += " after /controller was deleted"
                elif deleted:
                    start, cause = deleted[0], f"/controller was deleted (previous controller broker {pb})"
                else:
                    cause = f"the previous controller was broker {pb} (epoch {prev[2]})"
            self.incidents.append(Incident("controller_change", start, ts, f"broker {b}",
                                           f"became the controller (epoch {epoch}): {cause}"))

    def broker_incidents(self) -> None:
        for run in self.runs:
            if run.broker_id is None or run.last_ts >= self.end_ms - ENDED_BEFORE_MS:
                continue
            later = [r.first_ts for r in self.runs if r.broker_id == run.broker_id and r.first_ts > run.last_ts]
            if run.orderly and not later:
                continue  # the cluster's own stop at the end
            how = "stopped (orderly shutdown)" if run.orderly else "killed: its trace ends without a shutdown " \
                                                                   "(SIGKILL or a crash)"
            gone = self.vanished_after(run.broker_id, run.last_ts)
            if gone is not None and (not later or gone < min(later)):
                how += f"; its ZooKeeper registration vanished after {(gone - run.last_ts) / 1000:.2f} s"
            self.incidents.append(Incident("broker_down", run.last_ts, min(later) if later else None,
                                           f"broker {run.broker_id}",
                                           how + ("" if later else "; not restarted in the trace")))

    def stall_incidents(self) -> None:
        by_process: dict[str, list[tuple[float, float, int, tuple[str, ...]]]] = {}
        for process, arrived, answered, acks, tps in self.late:
            by_process.setdefault(process, []).append((arrived, answered, acks, tps))
        others = [i for i in self.incidents if i.kind in ("isr_shrink", "partition_offline", "broker_down",
                                                         "controller_change")]
        for process, reqs in by_process.items():
            reqs.sort()
            groups: list[list[tuple[float, float, int, tuple[str, ...]]]] = []
            for q in reqs:
                if groups and q[0] <= max(x[1] for x in groups[-1]):
                    groups[-1].append(q)
                else:
                    groups.append([q])
            for g in groups:
                start, end = min(x[0] for x in g), max(x[1] for x in g)
                tps = tuple(sorted({tp for x in g for tp in x[3]}))
                worst = max(x[1] - x[0] for x in g)
                acks = sorted({x[2] for x in g})
                behind = [i for i in others if i.start_ms <= end and (i.end_ms or self.end_ms) >= start
                          and (not i.partitions or set(i.partitions) & set(tps))]
                detail = (f"{len(g)} produce request{'s' if len(g) != 1 else ''} (acks={'/'.join(map(str, acks))}) "
                          f"answered after up to {worst / 1000:.2f} s (> {self.late_produce_ms / 1000:g} s)")
                if behind:
                    detail += "; meanwhile: " + "; ".join(f"{i.kind} {i.subject} at "
                                                          f"{(i.start_ms - start) / 1000:+.2f} s"
                                                          for i in behind[:4])
                self.incidents.append(Incident("produce_stall", start, end,
                                               f"broker {self.broker_of(process)}", detail, tps))


def detect(records: Iterable[Rec], runs: Sequence[ProcessRun],
           late_produce_ms: float = LATE_PRODUCE_MS) -> Findings:
    """The incidents and error counts of a trace: ``records`` in time order (``read_trace`` gives them), ``runs``
    every process incarnation in it."""
    first = min((r.first_ts for r in runs), default=None)
    last = max((r.last_ts for r in runs), default=None)
    end = last if last is not None else 0.0
    d = _Detector(runs, late_produce_ms, end)
    finals = [r for r in runs if r.broker_id is not None
              and not any(o.broker_id == r.broker_id and o.first_ts > r.first_ts for o in runs)]
    # the cluster's own stop: from the first orderly shutdown of a last incarnation, every broker still running
    # then was shut down in order (one killed before and never restarted does not count)
    stop = min((r.shutdown_ts for r in finals if r.shutdown_ts is not None), default=None)
    if stop is not None and all(r.shutdown_ts is not None for r in finals if r.last_ts >= stop):
        d.stopping_ms = stop
        stopped = sum(1 for r in finals if r.last_ts >= stop)
        d.incidents.append(Incident("cluster_stop", stop, end, f"{stopped} broker{'s' if stopped != 1 else ''}",
                                    "every broker shut down in order (changes from here on are the stop's)"))
    # process starts and ends, merged into the records by time: an end counts when the run went on without it
    marks = sorted([(r.first_ts, 0, r) for r in runs]
                   + [(r.last_ts, 1, r) for r in runs if r.last_ts < end - ENDED_BEFORE_MS],
                   key=lambda m: (m[0], m[1]))
    mi = 0
    for rec in records:
        while mi < len(marks) and marks[mi][0] <= rec.ts:
            _mark(d, marks[mi])
            mi += 1
        d.on(rec)
    for m in marks[mi:]:
        _mark(d, m)
    incidents = d.finish()
    errors = sorted((ErrorCount(e, req, c[0], c[1], e in EXPECTED_ERRORS,
                                EXPECTED_ERRORS.get(e) or ATTENTION_ERRORS.get(e, ""), c[2], c[3])
                     for (e, req), c in d.errors.items()), key=lambda x: (x.expected, -x.requests, x.error))
    return Findings(tuple(incidents), tuple(errors), first, last, late_produce_ms)


def _mark(d: _Detector, mark: tuple[float, int, ProcessRun]) -> None:
    if mark[1] == 0:
        d.on_start(mark[2])
    else:
        d.on_death(mark[2])
