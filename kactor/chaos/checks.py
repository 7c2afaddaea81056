"""The invariants of a chaos run, as pure functions over what the run recorded (kactor/chaos/history.py).

Safety (sampled throughout): at most one leader per partition per leader epoch; leader epochs and the controller
epoch never go back; leader ∈ ISR ⊆ replicas (a topic allowed unclean election is exempt from leader ∈ ISR).
Data (after healing): every acknowledged record at its offset on every ISR replica; the ISR replicas' logs
identical up to the high watermark; no offset ever seen with two values. Liveness: nothing stuck.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kactor.chaos.history import TP, Ack, ClusterSnapshot, FinalPartition, Read, Sample, Violation


def _name(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def check_safety(samples: Sequence[Sample], unclean_topics: Iterable[str] = ()) -> list[Violation]:
    unclean = set(unclean_topics)
    out: list[Violation] = []
    leaders: dict[tuple[TP, int], int] = {}
    last_epoch: dict[TP, int] = {}
    last_controller_epoch: int | None = None
    for s in samples:
        if s.controller_epoch is not None:
            if last_controller_epoch is not None and s.controller_epoch < last_controller_epoch:
                out.append(Violation("safety", f"controller epoch went back {last_controller_epoch} -> "
                                               f"{s.controller_epoch} at {s.ts:.3f}"))
            last_controller_epoch = s.controller_epoch if last_controller_epoch is None \
                else max(last_controller_epoch, s.controller_epoch)
        for tp, p in s.partitions.items():
            name = _name(tp)
            seen = leaders.setdefault((tp, p.leader_epoch), p.leader)
            if seen != p.leader:
                out.append(Violation("safety", f"{name}: two leaders in leader epoch {p.leader_epoch}: "
                                               f"{seen} and {p.leader} at {s.ts:.3f}"))
            prev = last_epoch.get(tp)
            if prev is not None and p.leader_epoch < prev:
                out.append(Violation("safety", f"{name}: leader epoch went back {prev} -> {p.leader_epoch} "
                                               f"at {s.ts:.3f}"))
            last_epoch[tp] = max(prev, p.leader_epoch) if prev is not None else p.leader_epoch
            if p.leader >= 0 and p.leader not in p.isr and tp[0] not in unclean:
                out.append(Violation("safety", f"{name}: leader {p.leader} not in ISR {list(p.isr)} "
                                               f"(epoch {p.leader_epoch}) at {s.ts:.3f}"))
            outside = sorted(set(p.isr) - p.replicas)
            if outside:
                out.append(Violation("safety", f"{name}: ISR {list(p.isr)} has {outside} outside the replicas "
                                               f"{sorted(p.replicas)} (epoch {p.leader_epoch}) at {s.ts:.3f}"))
    return _dedup(out)


def check_data(acks: Iterable[Ack], final: Mapping[TP, FinalPartition], logs: Mapping[tuple[int, TP], Sequence[str]],
               high_watermarks: Mapping[tuple[int, TP], int], reads: Iterable[Read] = ()) -> list[Violation]:
    """``final``: the surviving partitions (a deleted topic's records are expected nowhere); ``logs`` and
    ``high_watermarks``: each (broker, partition)'s log values by offset and its checkpointed high watermark."""
    out: list[Violation] = []
    acked = list(acks)
    for a in acked:
        tp = (a.topic, a.partition)
        part = final.get(tp)
        if part is None:
            continue
        for b in part.isr:
            log = logs.get((b, tp))
            if log is None or a.offset >= len(log):
                out.append(Violation("lost", f"{_name(tp)}: acknowledged {a.value!r} at offset {a.offset} is "
                                             f"missing on ISR replica {b} (log of {0 if log is None else len(log)})"))
            elif log[a.offset] != a.value:
                out.append(Violation("divergent", f"{_name(tp)}: acknowledged {a.value!r} at offset {a.offset}, "
                                                  f"replica {b} has {log[a.offset]!r} there"))
    committed: list[Read] = []
    for tp, part in sorted(final.items()):
        if not part.isr:
            continue
        hw = max(high_watermarks.get((b, tp), 0) for b in part.isr)
        reference: tuple[int, Sequence[str]] | None = None
        for b in part.isr:
            log = logs.get((b, tp))
            if len(log or ()) < hw:
                out.append(Violation("lost", f"{_name(tp)}: ISR replica {b} holds {0 if log is None else len(log)} "
                                             f"records, below the high watermark {hw}"))
                continue
            if log is None:
                continue
            committed.extend(Read(tp[0], tp[1], o, v, f"broker {b}'s log") for o, v in enumerate(log[:hw]))
            if reference is None:
                reference = (b, log)
                continue
            rb, rlog = reference
            first = next((o for o in range(hw) if log[o] != rlog[o]), None)
            if first is not None:
                out.append(Violation("divergent", f"{_name(tp)}: replicas {rb} and {b} differ at offset {first} "
                                                  f"({rlog[first]!r} vs {log[first]!r}), below the high watermark "
                                                  f"{hw}"))
    seen: dict[tuple[TP, int], Read] = {}
    observations = [Read(a.topic, a.partition, a.offset, a.value, "the producer's ack") for a in acked]
    for r in (*observations, *reads, *committed):
        key = ((r.topic, r.partition), r.offset)
        first_read = seen.setdefault(key, r)
        if first_read.value != r.value:
            out.append(Violation("divergent", f"{_name(key[0])}: offset {r.offset} read as {first_read.value!r} "
                                              f"({first_read.source}) and as {r.value!r} ({r.source})"))
    return _dedup(out)


def stuck_operations(snap: ClusterSnapshot) -> list[Violation]:
    out = [Violation("stuck", f"deletion of {t} not complete (/admin/delete_topics/{t})")
           for t in snap.pending_deletions]
    out += [Violation("stuck", f"deleted topic {t} still in /brokers/topics") for t in snap.deleted_still_present
            if t not in snap.pending_deletions]
    out += [Violation("stuck", f"reassignment of {_name(tp)} not complete (/admin/reassign_partitions)")
            for tp in snap.reassignment_pending]
    out += [Violation("stuck", f"{_name(tp)} still has adding/removing replicas") for tp in snap.reassigning
            if tp not in snap.reassignment_pending]
    out += [Violation("stuck", f"{_name(tp)} has no leader") for tp in snap.leaderless]
    out += [Violation("stuck", f"{_name(tp)} accepts no acks=all write") for tp in snap.unwritable
            if tp not in snap.leaderless]
    if snap.election_pending:
        out.append(Violation("stuck", "preferred replica election not complete (/admin/preferred_replica_election)"))
    return out


def _dedup(found: list[Violation]) -> list[Violation]:
    """Each violation once, in the order found (the same broken state read twice is one finding)."""
    return list(dict.fromkeys(found))
