"""The invariants of a chaos run, as pure functions over what the run recorded (kactor/chaos/history.py).

Safety (sampled throughout): at most one leader per partition per leader epoch; leader epochs and the controller
epoch never go back; leader ∈ ISR ⊆ replicas (a topic allowed unclean election is exempt from leader ∈ ISR).
Data (after healing): every acknowledged record at its offset on every ISR replica; the ISR replicas' logs
identical up to the high watermark; no offset ever seen with two values; no record written twice (the producer is
idempotent). Liveness: nothing stuck. Answers: none with UNKNOWN_SERVER_ERROR. The acknowledgement gap: gaps.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kactor.chaos.history import TP, Ack, ClusterSnapshot, ErrorAnswer, FinalPartition, Read, Sample, Violation


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


Producers = Mapping[tuple[int, TP], Sequence[tuple[int, int]]]


def client_resends(final: Mapping[TP, FinalPartition], logs: Mapping[tuple[int, TP], Sequence[str]],
                   producers: Producers) -> dict[TP, dict[str, list[int]]]:
    """Values that a replica of the ISR holds more than once, each copy from the same producer under a different
    epoch: the client re-sent them after bumping its epoch (confluentinc/librdkafka#4953: an idempotent producer
    answered OUT_OF_ORDER_SEQUENCE_NUMBER for a batch behind one whose answer was lost re-sends both from sequence 0),
    not the broker writing one batch twice. {partition: {value: offsets}}, from the first ISR replica with such a
    value; `check_duplicates` leaves these out."""
    out: dict[TP, dict[str, list[int]]] = {}
    for tp, part in sorted(final.items()):
        for b in part.isr:
            log, prods = logs.get((b, tp)), producers.get((b, tp))
            if log is None or prods is None or len(prods) != len(log):
                continue
            where: dict[str, list[int]] = {}
            for o, v in enumerate(log):
                where.setdefault(v, []).append(o)
            resent = {}
            for v, offsets in where.items():
                copies = [prods[o] for o in offsets]
                if len(offsets) > 1 and copies[0][0] >= 0 and len({pid for pid, _ in copies}) == 1 \
                        and len({epoch for _, epoch in copies}) == len(copies):
                    resent[v] = offsets
            if resent:
                out[tp] = resent
                break
    return out


def resend_events(resent: Mapping[TP, Mapping[str, Sequence[int]]]) -> list[str]:
    """events.log's line for each value of `client_resends`."""
    return [f"{_name(tp)}: {v!r} at offsets {', '.join(map(str, offsets))}, re-sent by the producer under a new epoch "
            "(librdkafka#4953), not counted a duplicate" for tp, values in sorted(resent.items())
            for v, offsets in values.items()]


def check_duplicates(final: Mapping[TP, FinalPartition], logs: Mapping[tuple[int, TP], Sequence[str]],
                     reads: Iterable[Read] = (), resent: Mapping[TP, Mapping[str, Sequence[int]]] | None = None
                     ) -> list[Violation]:
    """Every value the run sends is unique (``s<seed>-<n>``, one probe per partition), so a value at two offsets
    of a partition was written twice: by a retry the idempotent producer's sequence numbers should have made a
    no-op. Each source is looked at alone (each ISR replica's final log; the consumer's reads, which also cover
    deleted topics), so a replica disagreeing with another is divergence, not a duplicate; a partition's
    duplicates are those of the source that shows most. The values the client itself re-sent under a new epoch
    (``resent``: `client_resends`) are left out, from every source."""
    resent = resent or {}
    sources: dict[TP, list[tuple[str, dict[str, list[int]]]]] = {}
    for tp, part in sorted(final.items()):
        for b in part.isr:
            log = logs.get((b, tp))
            if log is None:
                continue
            where: dict[str, list[int]] = {}
            for o, v in enumerate(log):
                where.setdefault(v, []).append(o)
            sources.setdefault(tp, []).append((f"broker {b}'s log", where))
    read_offsets: dict[TP, dict[str, set[int]]] = {}
    for r in reads:
        read_offsets.setdefault((r.topic, r.partition), {}).setdefault(r.value, set()).add(r.offset)
    for tp, values in sorted(read_offsets.items()):
        sources.setdefault(tp, []).append(("the consumer's reads", {v: sorted(o) for v, o in values.items()}))
    out: list[Violation] = []
    for tp, found in sorted(sources.items()):
        known = resent.get(tp, {})
        worst: list[Violation] = []
        for source, where in found:
            dups = [Violation("duplicate", f"{_name(tp)}: {v!r} at offsets {', '.join(map(str, offsets))} "
                                           f"({source})")
                    for v, offsets in where.items() if len(offsets) > 1 and v not in known for _ in offsets[1:]]
            if len(dups) > len(worst):
                worst = dups
        out += worst
    return out


def check_server_errors(answers: Iterable[ErrorAnswer]) -> list[Violation]:
    """Each UNKNOWN_SERVER_ERROR answer is a violation: Kafka answers -1 only for a failure it did not foresee,
    and clients take it as fatal (an idempotent producer fails every record it holds)."""
    return [Violation("server-error", f"{a.source}" + (f" at {a.ts:.1f}s" if a.ts is not None else "")
                      + f": {a.detail}") for a in answers]
