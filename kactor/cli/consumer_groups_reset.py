"""``kactor consumer-groups --reset-offsets``, ``--delete`` and ``--delete-offsets``: Kafka 2.6.3's
ConsumerGroupCommand (``resetOffsets``, ``deleteGroups``, ``deleteOffsets``) through Kafka's protocol.

A reset is planned from the partitions in scope (``--topic T[:p,q]`` or, with ``--all-topics``, those the group has
committed) and one scenario, with the offsets it needs from ListOffsets (earliest, latest, by timestamp) and
OffsetFetch; offsets outside the log are clamped to it as ``checkOffsetsRange`` does (with its warning). Only a group
that is Empty (or Dead: unknown) is reset; for another the tool prints Kafka's error and an empty plan. ``--execute``
commits the plan (OffsetCommit through AlterConsumerGroupOffsets), otherwise it is a dry run. ``--delete`` sends
DeleteGroups, ``--delete-offsets`` OffsetDelete (API 47, which librdkafka does not send: kactor.cli.kafka_wire) to the
group's coordinator. As in 2.6, a refusal the tool prints as "Error: ..." leaves the exit code 0.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from kactor.cli import CliError
from kactor.cli.java_errors import java_exception_text
from kactor.cli.kafka_support import java_exception
from kactor.kafka_clients import KafkaClientError

if TYPE_CHECKING:
    from kactor.cli.kafka_wire import Bootstrap

TP = tuple[str, int]
# ConsumerGroupCommand's reset scenarios, in the order of its allResetOffsetScenarioOpts
SCENARIOS = ("to-offset", "shift-by", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current",
             "from-file")
NO_EXECUTE_WARNING = ("WARN: No action will be performed as the --execute option is missing.In a future major "
                      "release, the default behavior of this command will be to prompt the user before executing the "
                      "reset rather than doing a dry run. You should add the --dry-run option explicitly if you are "
                      "scripting this command and want to keep the current default behavior without prompting.")
OFFSET_DELETE = (47, 0)
# ConsumerGroupState as Kafka's tool prints it, by librdkafka's name
STATES = {"UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
          "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable", "DEAD": "Dead", "EMPTY": "Empty"}


class CommandFailedError(Exception):
    """ConsumerGroupCommand.run's ``catch Throwable``: "Error: Executing consumer group command failed due to ..."."""


@attrs.frozen(slots=True)
class Scenario:
    """One reset scenario: its option name and value (None for the flags)."""

    name: str
    value: str | None = None


def error(message: str) -> None:
    """ConsumerGroupCommand.printError: on stdout, after a blank line."""
    print(f"\nError: {message}", flush=True)


def warn(message: str) -> None:
    """The tool's log4j WARN line (tools-log4j.properties sends WARN to stderr)."""
    print(f"WARN {message}", file=sys.stderr, flush=True)


def convert_timestamp(text: str) -> int:
    """ConsumerGroupCommand.convertTimestamp: ``yyyy-MM-dd'T'HH:mm:ss.SSS`` with an optional zone (``Z``, ``+hh``,
    ``+hhmm``, ``+hh:mm``); without one it is UTC. Epoch milliseconds."""
    date, _, clock = text.partition("T")
    zoned = text if any(c in clock for c in "+-Z") else text + "Z"
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)", zoned)
    if m is None:
        raise CommandFailedError(f'Unparseable date: "{zoned}"')
    y, mo, d, h, mi, s, ms, zone = m.groups()
    if zone == "Z":
        tz = dt.UTC
    else:
        digits = zone[1:].replace(":", "")
        minutes = int(digits[:2]) * 60 + (int(digits[2:]) if len(digits) > 2 else 0)
        tz = dt.timezone(dt.timedelta(minutes=minutes if zone[0] == "+" else -minutes))
    try:
        when = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms) * 1000, tzinfo=tz)
    except ValueError:
        raise CommandFailedError(f'Unparseable date: "{zoned}"') from None
    return int(when.timestamp() * 1000)


_DURATION = re.compile(r"([-+]?)P(?:([-+]?\d+)D)?"
                       r"(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """java.time.Duration.parse (``PnDTnHnMn.nS``, signs allowed) in milliseconds."""
    m = _DURATION.fullmatch(text)
    if m is None or m.group(3) == "T" or not any(m.group(i) for i in (2, 4, 5, 6)):
        raise CommandFailedError("Text cannot be parsed to a Duration")
    sign, days, _, hours, minutes, seconds, fraction = m.groups()
    ms = ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes or 0)) * 60_000 + int(seconds or 0) * 1000
    if fraction:
        ms += (-1 if (seconds or "").startswith("-") else 1) * int(fraction.ljust(3, "0")[:3])
    return -ms if sign == "-" else ms


def check_offsets_range(requested: Mapping[TP, int], start: Mapping[TP, int],
                        end: Mapping[TP, int]) -> dict[TP, int]:
    """ConsumerGroupCommand.checkOffsetsRange: above the log end → the log end, below the log start → the log start,
    each with its warning."""
    out = {}
    for tp, offset in requested.items():
        name = f"{tp[0]}-{tp[1]}"
        if tp not in end:
            raise CommandFailedError(f"Unexpected non-existing offset value for topic partition {name}")
        if offset > end[tp]:
            warn(f"New offset ({offset}) is higher than latest offset for topic partition {name}. "
                 f"Value will be set to {end[tp]}")
            offset = end[tp]
        elif tp in start and offset < start[tp]:
            warn(f"New offset ({offset}) is lower than earliest offset for topic partition {name}. "
                 f"Value will be set to {start[tp]}")
            offset = start[tp]
        out[tp] = offset
    return out


@attrs.frozen(slots=True)
class OffsetsView:
    """What a plan is made from: ListOffsets (earliest, latest, for a timestamp) and the committed offsets."""

    earliest: Callable[[list[TP]], dict[TP, int]]
    latest: Callable[[list[TP]], dict[TP, int]]
    for_time: Callable[[list[TP], int], dict[TP, int]]  # -1 where no record is at or after the time
    committed: Callable[[], dict[TP, int]]
    now_ms: Callable[[], int] = lambda: int(time.time() * 1000)


def prepare_offsets(scenario: Scenario, partitions: list[TP], view: OffsetsView) -> dict[TP, int]:
    """ConsumerGroupCommand.prepareOffsetsToReset: the new offset of each partition in scope."""
    def known(offsets: Mapping[TP, int], what: str) -> dict[TP, int]:
        for tp in partitions:
            if tp not in offsets:
                raise CliError(f"Error getting {what} of topic partition: {tp[0]}-{tp[1]}")
        return {tp: offsets[tp] for tp in partitions}

    def by_time(timestamp: int) -> dict[TP, int]:
        found = view.for_time(partitions, timestamp)
        missing = [tp for tp in partitions if found.get(tp, -1) == -1]
        ends = view.latest(missing) if missing else {}
        return known({**{tp: o for tp, o in found.items() if o != -1}, **ends}, "offset by timestamp")

    name = scenario.name
    if name == "to-offset":
        assert scenario.value is not None
        requested = {tp: int(scenario.value) for tp in partitions}
        return check_offsets_range(requested, view.earliest(partitions), view.latest(partitions))
    if name == "to-earliest":
        return known(view.earliest(partitions), "starting offset")
    if name == "to-latest":
        return known(view.latest(partitions), "ending offset")
    if name == "shift-by":
        assert scenario.value is not None
        committed = view.committed()
        requested = {}
        for tp in partitions:
            if tp not in committed:
                raise CommandFailedError(f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current "
                                    "committed offset")
            requested[tp] = committed[tp] + int(scenario.value)
        return check_offsets_range(requested, view.earliest(partitions), view.latest(partitions))
    if name == "to-datetime":
        assert scenario.value is not None
        return by_time(convert_timestamp(scenario.value))
    if name == "by-duration":
        assert scenario.value is not None
        return by_time(view.now_ms() - parse_duration_ms(scenario.value))
    if name == "to-current":
        committed = view.committed()
        without = [tp for tp in partitions if tp not in committed]
        ends = view.latest(without) if without else {}
        for tp in without:
            if tp not in ends:
                raise CliError(f"Error getting ending offset of topic partition: {tp[0]}-{tp[1]}")
        return {tp: committed[tp] if tp in committed else ends[tp] for tp in partitions}
    raise CliError(f"Option '[reset-offsets]' requires one of the following scenarios: "
                   f"Set({', '.join(f'[{s}]' for s in SCENARIOS)})")


def parse_reset_plan(text: str, groups: list[str]) -> dict[str, dict[TP, int]]:
    """ConsumerGroupCommand.parseResetPlan: ``topic,partition,offset`` lines for a single --group (the format
    --export writes for one group), else ``group,topic,partition,offset``."""
    lines = text.split("\n")

    def fields(line: str, n: int) -> list[str] | None:
        parts = line.split(",")
        if len(parts) != n:
            return None
        try:
            int(parts[-2]), int(parts[-1])
        except ValueError:
            return None
        return parts
    plan: dict[str, dict[TP, int]] = {}
    old_format = len(groups) == 1 and fields(lines[0], 3) is not None
    for line in lines:
        if not line.strip():
            continue
        parts = fields(line, 3 if old_format else 4)
        if parts is None:
            raise CommandFailedError(f"Cannot parse reset plan line: {line}")
        group, topic, partition, offset = ([groups[0], *parts] if old_format else parts)
        plan.setdefault(group, {})[(topic, int(partition))] = int(offset)
    return plan


def export_csv(plan: Mapping[str, Mapping[TP, int]], single_group: bool) -> str:
    """ConsumerGroupCommand.exportOffsetsToCsv: one line per partition, the group column only for several groups."""
    return "".join((f"{t},{p},{o}\n" if single_group else f"{g},{t},{p},{o}\n")
                   for g in sorted(plan) for (t, p), o in sorted(plan[g].items()))


def render_plan(plan: Mapping[str, Mapping[TP, int]]) -> list[str]:
    """ConsumerGroupCommand.printOffsetsToReset: ``%-30s %-30s %-10s %-15s`` lines (padding kept), after a blank
    line; nothing at all for no group."""
    if not plan:
        return []
    lines = ["", f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"]
    for group in sorted(plan):
        for (topic, partition), offset in sorted(plan[group].items()):
            lines.append(f"{group:<30} {topic:<30} {partition!s:<10} {offset!s:<15}")
    return lines


def parse_topic_args(topic_args: Iterable[str], partitions_of: Callable[[str], list[int]]) -> list[TP]:
    """ConsumerGroupCommand.parseTopicPartitionsToReset: ``topic:0,1,2`` names partitions, a bare topic means all of
    its partitions."""
    out: list[TP] = []
    for arg in topic_args:
        if ":" in arg:
            topic, _, listed = arg.partition(":")
            for p in listed.split(","):
                try:
                    out.append((topic, int(p)))
                except ValueError:
                    raise CommandFailedError(f'For input string: "{p}"') from None
        else:
            out.extend((arg, p) for p in partitions_of(arg))
    return out


# -- the admin requests --------------------------------------------------------------------------------------------
def _result(future: Any, timeout_s: float) -> Any:
    from confluent_kafka import KafkaException

    try:
        return future.result(timeout_s + 5)
    except KafkaException as e:
        raise CommandFailedError(java_exception(e.args[0])) from None


class AdminView:
    """The requests a reset needs, through confluent-kafka's AdminClient (Kafka's ``withTimeoutMs``: ``timeout_s``)."""

    def __init__(self, admin: Any, timeout_s: float) -> None:
        self.admin = admin
        self.timeout_s = timeout_s

    def list_offsets(self, partitions: list[TP], spec: Any) -> dict[TP, int]:
        from confluent_kafka import TopicPartition

        if not partitions:
            return {}
        futures = self.admin.list_offsets({TopicPartition(t, p): spec for t, p in partitions},
                                          request_timeout=self.timeout_s)
        return {(tp.topic, tp.partition): _result(f, self.timeout_s).offset for tp, f in futures.items()}

    def offsets_view(self, group: str) -> OffsetsView:
        from confluent_kafka.admin import OffsetSpec

        return OffsetsView(earliest=lambda tps: self.list_offsets(tps, OffsetSpec.earliest()),
                           latest=lambda tps: self.list_offsets(tps, OffsetSpec.latest()),
                           for_time=lambda tps, ts: self.list_offsets(tps, OffsetSpec.for_timestamp(ts)),
                           committed=lambda: self.committed(group))

    def committed(self, group: str) -> dict[TP, int]:
        from confluent_kafka import ConsumerGroupTopicPartitions

        fetched = _result(self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                                 request_timeout=self.timeout_s)[group],
                          self.timeout_s)
        return {(tp.topic, tp.partition): tp.offset for tp in fetched.topic_partitions or () if tp.offset >= 0}

    def partitions_of(self, topic: str) -> list[int]:
        """describeTopics: UnknownTopicOrPartitionException for a topic the cluster does not have. The Metadata
        request lists every topic: one naming the topic would ask the broker to auto-create it."""
        from confluent_kafka import KafkaException

        try:
            info = self.admin.list_topics(timeout=self.timeout_s).topics.get(topic)
        except KafkaException as e:
            raise CommandFailedError(java_exception(e.args[0])) from None
        if info is None or info.error is not None:
            raise CommandFailedError(java_exception_text(3 if info is None else info.error.code()))
        return sorted(info.partitions)

    def state(self, group: str) -> str:
        desc = _result(self.admin.describe_consumer_groups([group], request_timeout=self.timeout_s)[group],
                       self.timeout_s)
        name = getattr(desc.state, "name", str(desc.state))
        return STATES.get(name, name)

    def commit(self, group: str, offsets: Mapping[TP, int]) -> None:
        """AlterConsumerGroupOffsets (an OffsetCommit at the coordinator, with no member: the group is empty)."""
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        wanted = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
        request = ConsumerGroupTopicPartitions(group, wanted)
        result = _result(self.admin.alter_consumer_group_offsets([request], request_timeout=self.timeout_s)[group],
                         self.timeout_s)
        for tp in result.topic_partitions or ():
            if tp.error is not None:
                raise CommandFailedError(java_exception(tp.error))


def reset_offsets(view: AdminView, groups: list[str], scenario: Scenario, topics: list[str] | None,
                  execute: bool, from_file: Mapping[str, Mapping[TP, int]] | None = None) -> dict[str, dict[TP, int]]:
    """ConsumerGroupCommand.resetOffsets: each Empty or Dead group's plan (committed with ``execute``); any other
    group gets Kafka's error line and an empty plan."""
    plan: dict[str, dict[TP, int]] = {}
    for group in sorted(groups):
        state = view.state(group)
        if state not in ("Empty", "Dead"):
            error(f"Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                  f"{state}.")
            plan[group] = {}
            continue
        if from_file is not None:
            if group not in from_file:
                error(f"No reset plan for group {group} found")
                offsets: dict[TP, int] = {}
            else:
                requested = dict(from_file[group])
                offsets_view = view.offsets_view(group)
                offsets = check_offsets_range(requested, offsets_view.earliest(sorted(requested)),
                                              offsets_view.latest(sorted(requested)))
        else:
            partitions = (parse_topic_args(topics, view.partitions_of) if topics is not None
                          else sorted(view.committed(group)))
            offsets = prepare_offsets(scenario, partitions, view.offsets_view(group))
        if execute and offsets:
            view.commit(group, offsets)
        plan[group] = offsets
    return plan


def delete_groups(admin: Any, groups: list[str], timeout_s: float) -> None:
    """ConsumerGroupCommand.deleteGroups: DeleteGroups; each failure as ``f.get``'s ExecutionException."""
    from confluent_kafka import KafkaException

    futures = admin.delete_consumer_groups(groups, request_timeout=timeout_s)
    failed: dict[str, str] = {}
    done: list[str] = []
    for group in groups:
        try:
            futures[group].result(timeout_s + 5)
            done.append(group)
        except KafkaException as e:
            failed[group] = java_exception(e.args[0])
    quoted = "'" + "', '".join(done) + "'"
    if not failed:
        print(f"Deletion of requested consumer groups ({quoted}) was successful.", flush=True)
        return
    error("Deletion of some consumer groups failed:")
    for group, text in failed.items():
        print(f"* Group '{group}' could not be deleted due to: java.util.concurrent.ExecutionException: {text}")
    if done:
        print(f"\nThese consumer groups were deleted successfully: {quoted}", flush=True)


TOP_LEVEL_MESSAGES = {
    24: "'{g}' is not valid.",  # INVALID_GROUP_ID
    69: "'{g}' does not exist.",  # GROUP_ID_NOT_FOUND
    30: "Access to '{g}' is not authorized.",  # GROUP_AUTHORIZATION_FAILED
    68: "Deleting offsets of a consumer group '{g}' is forbidden if the group is not empty.",  # NON_EMPTY_GROUP
}
PARTITION_LEVEL = {86, 29, 3}  # GROUP_SUBSCRIBED_TO_TOPIC, TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION


def delete_offsets(bootstrap: Bootstrap, view: AdminView, group: str, topics: list[str], timeout_s: float) -> None:
    """ConsumerGroupCommand.deleteOffsets: OffsetDelete at the coordinator for the named partitions (all of a bare
    topic's; a topic the cluster does not know is a row of its own, "Not Provided"); the top-level error's line, then
    Kafka's TOPIC / PARTITION / STATUS table."""
    from kactor.cli import kafka_wire

    rows: dict[TP, str | None] = {}
    partitions: list[TP] = []
    for arg in topics:
        if ":" in arg:
            partitions.extend(parse_topic_args([arg], view.partitions_of))
            continue
        try:
            partitions.extend((arg, p) for p in view.partitions_of(arg))
        except CommandFailedError as e:
            rows[(arg, -1)] = str(e)
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    body = {"group_id": group, "topics": [{"name": t, "partitions": [{"partition_index": p} for p in ps]}
                                          for t, ps in by_topic.items()]}
    unsupported = None
    try:
        if kafka_wire.supports(bootstrap, OFFSET_DELETE[0], timeout_s):
            answer = kafka_wire.coordinator_request(bootstrap, group, *OFFSET_DELETE, body, timeout_s)
        else:  # the AdminClient's UnsupportedVersionException for an API the broker does not advertise
            unsupported = "The broker does not support OFFSET_DELETE"
            answer = {"error_code": 35, "topics": []}
    except KafkaClientError as e:
        raise CommandFailedError(str(e)) from None
    top = answer["error_code"]
    errors = {(t["name"], p["partition_index"]): p["error_code"]
              for t in answer.get("topics") or () for p in t["partitions"]}
    first_partition_error = next((c for c in errors.values() if c), 0)
    top_level = top or first_partition_error  # a topic describeTopics did not know is a row only, as in 2.6
    for tp in partitions:
        code = top or errors.get(tp, 0)
        rows[tp] = java_exception_text(code, unsupported) if code else None
    if top_level == 0:
        print(f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}", flush=True)
    elif top_level in TOP_LEVEL_MESSAGES:
        error(TOP_LEVEL_MESSAGES[top_level].format(g=group))
    elif top_level in PARTITION_LEVEL:
        error("Encounter some partition level error, see the follow-up details:")
    else:
        error(f"Encounter some unknown error: {_error_name(top_level)}")
    print(f"\n{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}")
    for (topic, partition), failure in sorted(rows.items(), key=lambda r: r[0][0] + str(r[0][1])):
        where = str(partition) if partition >= 0 else "Not Provided"
        status = f"Error: {failure}" if failure is not None else "Successful"
        print(f"{topic:<30} {where:<15} {status:<15}", flush=True)


def _error_name(code: int) -> str:
    """An Errors value as Scala prints it: its name."""
    from messages.common import Errors

    try:
        return Errors(code).name
    except ValueError:
        return str(code)
