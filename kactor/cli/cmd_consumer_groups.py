"""``kactor consumer-groups``: kafka-consumer-groups.sh through Kafka's protocol (confluent-kafka's AdminClient).

``--list`` prints every group id (ListGroups to every broker). ``--describe --group G`` (or ``--all-groups``)
prints ConsumerGroupCommand's offsets table — GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID
HOST CLIENT-ID — from DescribeGroups (members and their assignments, at the group's coordinator), OffsetFetch
(committed offsets) and ListOffsets (each partition's log end as a consumer sees it, the high watermark);
``--members`` and ``--state`` print the other two tables. The notes on stderr are Kafka's: a group that does not
exist, has no active members, or is rebalancing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import attrs

from kactor.cli.kafka_support import add_bootstrap_args, bootstrap, kafka_errors
from kactor.cli.support import usage_error
from kactor.kafka_clients import KafkaClientError, admin_client, cluster_metadata, end_offsets, error_text

MISSING = "-"  # ConsumerGroupCommand's MISSING_COLUMN_VALUE
# ConsumerGroupState as Kafka's tool prints it
STATES = {"UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
          "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable", "DEAD": "Dead", "EMPTY": "Empty"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "consumer-groups", help="list and describe consumer groups (kafka-consumer-groups.sh)",
        description="Lists consumer groups, or describes them: committed offsets, log end offsets and lag per "
                    "partition with the member that owns it (default), the members (--members) or the group's "
                    "state (--state), through Kafka's protocol.")
    add_bootstrap_args(p)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="list all consumer groups")
    action.add_argument("--describe", action="store_true", help="describe consumer groups")
    p.add_argument("--group", action="append", default=[], metavar="GROUP", help="the group to describe (repeatable)")
    p.add_argument("--all-groups", action="store_true", help="describe every group")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--offsets", action="store_true", help="the offsets table (the default)")
    view.add_argument("--members", action="store_true", help="the members table")
    view.add_argument("--state", action="store_true", help="the group's coordinator, assignor, state and size")
    p.add_argument("--verbose", action="store_true", help="with --members: each member's assignment")
    p.add_argument("--timeout", type=int, default=5000, metavar="MS",
                   help="milliseconds to wait for each answer (default 5000)")
    p.set_defaults(func=run, _parser=p)


@attrs.frozen(slots=True)
class OffsetRow:
    """One line of the offsets table (ConsumerGroupCommand.PartitionAssignmentState)."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end_offset: int | None
    consumer_id: str | None = None
    host: str | None = None
    client_id: str | None = None

    @property
    def lag(self) -> int | None:
        """ConsumerGroupCommand.getLag: log end minus the committed offset, unknown when either is."""
        if self.offset is None or self.log_end_offset is None or self.offset < 0 or self.log_end_offset < 0:
            return None
        return self.log_end_offset - self.offset


@attrs.frozen(slots=True)
class Member:
    consumer_id: str
    host: str
    client_id: str
    assignment: tuple[tuple[str, int], ...]


@attrs.frozen(slots=True)
class GroupState:
    """What the three tables are made of, for one group."""

    group: str
    state: str
    assignor: str
    coordinator: str
    members: tuple[Member, ...]
    committed: dict[tuple[str, int], int]
    log_end: dict[tuple[str, int], int]


def offset_rows(g: GroupState) -> list[OffsetRow]:
    """ConsumerGroupCommand.collectGroupOffsets: a row per partition a member owns (its committed offset, if any),
    a row per member without partitions, then the committed partitions nobody owns now; by topic and partition."""
    owned: list[OffsetRow] = []
    idle: list[OffsetRow] = []
    for m in g.members:
        if not m.assignment:
            idle.append(OffsetRow(g.group, None, None, None, None, m.consumer_id, m.host, m.client_id))
        for tp in m.assignment:
            owned.append(OffsetRow(g.group, tp[0], tp[1], g.committed.get(tp), g.log_end.get(tp),
                                   m.consumer_id, m.host, m.client_id))
    assigned = {tp for m in g.members for tp in m.assignment}
    orphans = [OffsetRow(g.group, tp[0], tp[1], off, g.log_end.get(tp)) for tp, off in g.committed.items()
               if tp not in assigned]

    def by_tp(r: OffsetRow) -> tuple[str, int]:
        return r.topic or "", -1 if r.partition is None else r.partition
    return sorted(owned, key=by_tp) + idle + sorted(orphans, key=by_tp)


def _cell(value: object) -> str:
    return MISSING if value is None else str(value)


def _table(header: tuple[str, ...], rows: Iterable[tuple[object, ...]], widths: tuple[int | None, ...]) -> list[str]:
    """Kafka's left-aligned ``%-Ns`` columns: a width of None grows to the longest cell (at least 15, as
    ConsumerGroupCommand's max*Len start), an int is fixed; the last column is not padded."""
    cells = [tuple(_cell(v) for v in row) for row in rows]
    sizes = [w if w is not None else max([15, len(h), *(len(c[i]) for c in cells)])
             for i, (h, w) in enumerate(zip(header, widths, strict=True))]
    last = len(header) - 1
    return [" ".join(c if i == last else c.ljust(sizes[i]) for i, c in enumerate(line)).rstrip()
            for line in [header, *cells]]


def render_offsets(rows: list[OffsetRow]) -> list[str]:
    header = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
              "CLIENT-ID")
    return _table(header, ((r.group, r.topic, r.partition, r.offset, r.log_end_offset, r.lag, r.consumer_id, r.host,
                            r.client_id) for r in rows), (None, None, 10, 15, 15, 15, None, None, None))


def render_members(g: GroupState, verbose: bool) -> list[str]:
    header = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", *(("ASSIGNMENT",) if verbose else ()))

    def assignment(m: Member) -> str:
        topics: dict[str, list[int]] = {}
        for t, p in sorted(m.assignment):
            topics.setdefault(t, []).append(p)
        return ", ".join(f"{t}({','.join(map(str, ps))})" for t, ps in topics.items()) or MISSING
    rows = ((g.group, m.consumer_id, m.host, m.client_id, len(m.assignment), *((assignment(m),) if verbose else ()))
            for m in g.members)
    return _table(header, rows, (None, None, None, None, 12, None)[:len(header)])


def render_state(g: GroupState) -> list[str]:
    return _table(("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
                  [(g.group, g.coordinator, g.assignor or MISSING, g.state, len(g.members))],
                  (None, 25, 20, 20, None))


def state_note(group: str, state: str, rows: int) -> tuple[str | None, bool]:
    """ConsumerGroupCommand.shouldPrintMemberState: (a note for stderr, print the table?)."""
    if state == "Dead":
        return f"Error: Consumer group '{group}' does not exist.", False
    if state == "Empty":
        return f"\nConsumer group '{group}' has no active members.", rows > 0
    if state in ("PreparingRebalance", "CompletingRebalance"):
        return f"\nWarning: Consumer group '{group}' is rebalancing.", rows > 0
    return None, rows > 0


def run(args: argparse.Namespace) -> int:
    servers = bootstrap(args)
    if args.timeout <= 0:
        usage_error(args, "--timeout must be positive")
    if args.list and (args.group or args.all_groups or args.members or args.state or args.offsets):
        usage_error(args, "--list takes no --group, --all-groups, --offsets, --members or --state")
    if args.describe and bool(args.group) == args.all_groups:
        usage_error(args, "--describe needs --group GROUP or --all-groups (not both)")
    timeout_s = args.timeout / 1000
    with kafka_errors():
        admin = admin_client(servers, "kactor-consumer-groups")
        cluster_metadata(admin, servers, timeout_s)
        if args.list:
            for group in sorted(list_groups(admin, timeout_s)):
                print(group)
            return 0
        groups = args.group or sorted(list_groups(admin, timeout_s))
        missing = 0
        for group in groups:
            g = describe_group(admin, group, timeout_s)
            rows = offset_rows(g) if not (args.members or args.state) else []
            count = len(g.members) if args.members else 1 if args.state else len(rows)
            note, show = state_note(group, g.state, count if g.state != "Dead" else 0)
            if note:
                print(note, file=sys.stderr, flush=True)
            missing += g.state == "Dead"
            if not show:
                continue
            lines = (render_members(g, args.verbose) if args.members else render_state(g) if args.state
                     else render_offsets(rows))
            print("\n" + "\n".join(lines) + "\n", flush=True)
    return 1 if missing else 0


def list_groups(admin: Any, timeout_s: float) -> list[str]:
    """ListGroups on every broker (AdminClient.list_consumer_groups)."""
    result = admin.list_consumer_groups(request_timeout=timeout_s).result(timeout_s + 5)
    if result.errors:
        raise KafkaClientError(f"listing groups: {'; '.join(error_text(e) for e in result.errors)}")
    return [g.group_id for g in result.valid]


def describe_group(admin: Any, group: str, timeout_s: float) -> GroupState:
    """DescribeGroups + OffsetFetch at the coordinator, ListOffsets (latest) at the partitions' leaders."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    desc = admin.describe_consumer_groups([group], request_timeout=timeout_s)[group].result(timeout_s + 5)
    state = STATES.get(getattr(desc.state, "name", str(desc.state)), str(desc.state))
    members = tuple(Member(m.member_id, m.host, m.client_id,
                           tuple(sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)))
                    for m in desc.members)
    committed: dict[tuple[str, int], int] = {}
    if state != "Dead":
        fetched = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                    request_timeout=timeout_s)[group].result(timeout_s + 5)
        committed = {(tp.topic, tp.partition): tp.offset for tp in fetched.topic_partitions or () if tp.offset >= 0}
    tps = sorted(set(committed) | {tp for m in members for tp in m.assignment})
    log_end = end_offsets(admin, tps, timeout_s)
    c = desc.coordinator
    coordinator = f"{c.host}:{c.port} ({c.id})" if c is not None else MISSING
    return GroupState(group, state, desc.partition_assignor, coordinator, members, committed, log_end)

