"""``kactor consumer-groups``: kafka-consumer-groups.sh through Kafka's protocol (confluent-kafka's AdminClient).

``--list`` prints every group id (ListGroups to every broker). ``--describe --group G`` (or ``--all-groups``)
prints ConsumerGroupCommand's offsets table — GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID
HOST CLIENT-ID — from DescribeGroups (members and their assignments, at the group's coordinator), OffsetFetch
(committed offsets) and ListOffsets (each partition's log end as a consumer sees it, the high watermark);
``--members`` and ``--state`` print the other two tables. The notes on stderr are Kafka's: a group that does not
exist, has no active members, or is rebalancing.

``--reset-offsets``, ``--delete`` and ``--delete-offsets``: kactor/cli/consumer_groups_reset.py.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from typing import Any

import attrs

from kactor.cli import CliError
from kactor.cli import consumer_groups_reset as reset
from kactor.cli.client_properties import Servers
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, kafka_errors, servers
from kactor.cli.support import usage_error
from kactor.kafka_clients import KafkaClientError, admin_client, cluster_metadata, end_offsets, error_text

MISSING = "-"  # ConsumerGroupCommand's MISSING_COLUMN_VALUE
STATES = reset.STATES


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "consumer-groups",
        description="Lists consumer groups, or describes them: committed offsets, log end offsets and lag per "
                    "partition with the member that owns it (default), the members (--members) or the group's "
                    "state (--state); resets an inactive group's offsets (--reset-offsets), deletes groups "
                    "(--delete) or a group's offsets of some topics (--delete-offsets), through Kafka's protocol.")
    add_bootstrap_args(p)
    add_client_config_arg(p, "--command-config",
                          "Property file containing configs to be passed to Admin Client and Consumer.")
    for action in ACTIONS:
        p.add_argument(f"--{action}", action="store_true", help=ACTION_HELP[action])
    p.add_argument("--group", action="append", default=[], metavar="GROUP", help="the group (repeatable)")
    p.add_argument("--all-groups", action="store_true", help="every group (--describe, --delete, --reset-offsets)")
    p.add_argument("--topic", action="append", default=None, metavar="TOPIC[:P,...]",
                   help="with --reset-offsets or --delete-offsets: a topic, or some of its partitions as "
                        "topic1:0,1,2 (repeatable)")
    p.add_argument("--all-topics", action="store_true",
                   help="Consider all topics assigned to a group in the `reset-offsets` process.")
    for name, metavar, text in (("to-offset", "OFFSET", "Reset offsets to a specific offset."),
                                ("from-file", "CSV", "Reset offsets to values defined in CSV file."),
                                ("shift-by", "N", "Reset offsets shifting current offset by 'n', where 'n' can be "
                                                  "positive or negative."),
                                ("to-datetime", "DATETIME", "Reset offsets to offset from datetime. Format: "
                                                            "'YYYY-MM-DDTHH:mm:SS.sss'"),
                                ("by-duration", "DURATION", "Reset offsets to offset by duration from current "
                                                            "timestamp. Format: 'PnDTnHnMnS'")):
        p.add_argument(f"--{name}", metavar=metavar, help=text)
    for name, text in (("to-earliest", "Reset offsets to earliest offset."),
                       ("to-latest", "Reset offsets to latest offset."),
                       ("to-current", "Reset offsets to current offset."),
                       ("dry-run", "Only show results without executing changes on Consumer Groups. Supported "
                                   "operations: reset-offsets."),
                       ("execute", "Execute operation. Supported operations: reset-offsets."),
                       ("export", "Export operation execution to a CSV file. Supported operations: reset-offsets.")):
        p.add_argument(f"--{name}", action="store_true", help=text)
    view = p.add_mutually_exclusive_group()
    view.add_argument("--offsets", action="store_true", help="the offsets table (the default)")
    view.add_argument("--members", action="store_true", help="the members table")
    view.add_argument("--state", action="store_true", help="the group's coordinator, assignor, state and size")
    p.add_argument("--verbose", action="store_true", help="with --members: each member's assignment")
    p.add_argument("--timeout", type=int, default=5000, metavar="MS",
                   help="milliseconds to wait for each answer (default 5000)")
    p.set_defaults(func=run, _parser=p)


ACTIONS = ("list", "describe", "delete", "reset-offsets", "delete-offsets")
ACTION_HELP = {
    "list": "List all consumer groups.",
    "describe": "Describe consumer group and list offset lag (number of messages not yet processed) related to "
                "given group.",
    "delete": "Pass in groups to delete topic partition offsets and ownership information over the entire consumer "
              "group. For instance --group g1 --group g2",
    "reset-offsets": "Reset offsets of consumer group. Supports one consumer group at the time, and instances should "
                     "be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets to reset, "
                     "and --execute to update the offsets. One of the reset specifications: --to-datetime, "
                     "--by-duration, --to-earliest, --to-latest, --shift-by, --to-offset, --to-current.",
    "delete-offsets": "Delete offsets of consumer group. Supports one consumer group at the time, and multiple "
                      "topics.",
}
SCOPE = "[group], [all-groups]"  # allGroupSelectionScopeOpts as Scala prints it


def check_args(args: argparse.Namespace) -> list[str]:
    """ConsumerGroupCommandOptions.checkArgs for the actions it shares with 2.6 beyond --list/--describe, then the
    one-action rule; each violation is CommandLineUtils.printUsageAndDie's message (exit 1). The scenarios given."""
    def die(message: str) -> None:
        raise CliError(message)

    given = {a for a in ACTIONS if getattr(args, a.replace("-", "_"))}
    scenarios = [s for s in ("to-offset", "shift-by", "to-datetime", "by-duration", "to-earliest", "to-latest",
                             "to-current", "from-file") if getattr(args, s.replace("-", "_")) not in (None, False)]
    if "delete" in given:
        if not args.group and not args.all_groups:
            die(f"Option [delete] takes one of these options: {SCOPE}")
        if args.topic is not None:
            die("The consumer does not support topic-specific offset deletion from a consumer group.")
    if "delete-offsets" in given and (not args.group or args.topic is None):
        die("Option [delete-offsets] takes the following options: [group], [topic]")
    if "reset-offsets" in given:
        if args.dry_run and args.execute:
            die("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not args.dry_run and not args.execute:
            print(reset.NO_EXECUTE_WARNING, file=sys.stderr, flush=True)
        if not args.group and not args.all_groups:
            die(f"Option [reset-offsets] takes one of these options: {SCOPE}")
        if len(scenarios) > 1:
            die(f'Option "[{scenarios[0]}]" can\'t be used with option "[{scenarios[1]}]"')
    for name in ("to-offset", "shift-by"):  # joptsimple's ofType(classOf[Long])
        value = getattr(args, name.replace("-", "_"))
        if value is not None and not re.fullmatch(r"[-+]?\d+", value):
            die(f"Cannot parse argument '{value}' of option {name}")
    if args.group and args.all_groups:
        die('Option "[group]" can\'t be used with option "[all-groups]"')
    if args.topic is not None and given & {"list", "describe"}:
        die(f'Option "[topic]" can\'t be used with option "[{sorted(given & {"list", "describe"})[0]}]"')
    if len(given) != 1:
        die("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
            "--delete-offsets")
    return scenarios


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
    scenarios = check_args(args)
    target = servers(args)
    if args.timeout <= 0:
        usage_error(args, "--timeout must be positive")
    if args.reset_offsets or args.delete or args.delete_offsets:
        return run_changes(args, target, scenarios)
    if args.list and (args.group or args.all_groups or args.members or args.state or args.offsets):
        usage_error(args, "--list takes no --group, --all-groups, --offsets, --members or --state")
    if args.describe and bool(args.group) == args.all_groups:
        usage_error(args, "--describe needs --group GROUP or --all-groups (not both)")
    timeout_s = args.timeout / 1000
    with kafka_errors():
        admin = admin_client(target.bootstrap, "kactor-consumer-groups", target.librdkafka())
        cluster_metadata(admin, target.bootstrap, timeout_s)
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


def run_changes(args: argparse.Namespace, target: Servers, scenarios: list[str]) -> int:
    """--reset-offsets, --delete and --delete-offsets (kactor/cli/consumer_groups_reset.py). A failure inside is
    ConsumerGroupCommand.run's "Error: Executing consumer group command failed due to ...", exit 0 as in 2.6."""
    timeout_s = args.timeout / 1000
    if args.reset_offsets and not scenarios:
        raise CliError("Option '[reset-offsets]' requires one of the following scenarios: "
                       f"Set({', '.join(f'[{s}]' for s in reset.SCENARIOS)})")
    if args.reset_offsets and args.topic is None and not args.all_topics and not args.from_file:
        raise CliError("One of the reset scopes should be defined: --all-topics, --topic.")
    with kafka_errors():
        admin = admin_client(target.bootstrap, "kactor-consumer-groups", target.librdkafka())
        cluster_metadata(admin, target.bootstrap, timeout_s)
        groups = args.group or sorted(list_groups(admin, timeout_s))
        view = reset.AdminView(admin, timeout_s)
        try:
            if args.delete:
                reset.delete_groups(admin, groups, timeout_s)
            elif args.delete_offsets:
                reset.delete_offsets(target, view, groups[0], args.topic, timeout_s)
            else:
                name = scenarios[0]
                scenario = reset.Scenario(name, getattr(args, name.replace("-", "_")) if name in VALUED else None)
                from_file = None
                if args.from_file:
                    from kactor.cli.support import read_text_file

                    from_file = reset.parse_reset_plan(read_text_file(args.from_file, "reset plan CSV file"),
                                                       args.group)
                plan = reset.reset_offsets(view, groups, scenario, None if args.all_topics else args.topic,
                                           execute=args.execute, from_file=from_file)
                if args.export:
                    print(reset.export_csv(plan, len(args.group) == 1), flush=True)
                else:
                    for line in reset.render_plan(plan):
                        print(line, flush=True)
        except reset.CommandFailedError as e:
            reset.error(f"Executing consumer group command failed due to {e}")
    return 0


VALUED = ("to-offset", "shift-by", "to-datetime", "by-duration", "from-file")


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

