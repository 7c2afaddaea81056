"""A live view of a kactor (= Kafka 2.6 ZooKeeper-mode) cluster, read from ZooKeeper alone: controller and epoch,
registered brokers, and every partition's leader / leader epoch / ISR / replicas with under-replicated, offline
and reassigning partitions marked. There is no single Kafka tool for this; it combines what
``kafka-topics.sh --describe`` and ``zookeeper-shell.sh`` show. Rendered as a rich table or as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kactor.admin.acks import AckSnapshot, PartitionAcks
from kactor.admin.topics import PartitionInfo, read_partitions
from messages.common import TopicPartition
from zk_bridge.admin.admin_zk import AdminZkClient


@attrs.frozen
class BrokerView:
    """A registered broker (/brokers/ids/<id>); epoch is the registration's czxid."""

    id: int
    endpoints: tuple[str, ...]
    rack: str | None
    epoch: int


@attrs.frozen
class PartitionView:
    """A partition with its health flags."""

    info: PartitionInfo
    under_replicated: bool
    offline: bool
    reassigning: bool
    pending_target: tuple[int, ...] | None = None  # target in /admin/reassign_partitions, if listed there

    @property
    def status(self) -> str:
        flags = [name for name, on in (("offline", self.offline), ("under-replicated", self.under_replicated),
                                       ("reassigning", self.reassigning)) if on]
        return ",".join(flags) or "ok"


@attrs.frozen
class TopicView:
    name: str
    marked_for_deletion: bool
    config: dict[str, str]
    partitions: tuple[PartitionView, ...]


@attrs.frozen
class ClusterView:
    """Everything `describe` shows, read in one pass."""

    zookeeper: str
    controller_id: int | None
    controller_epoch: int | None
    brokers: tuple[BrokerView, ...]
    topics: tuple[TopicView, ...]
    pending_reassignment: dict[TopicPartition, tuple[int, ...]]
    pending_preferred_election: frozenset[TopicPartition]

    def partitions(self) -> list[PartitionView]:
        return [p for t in self.topics for p in t.partitions]

    def counts(self) -> dict[str, int]:
        parts = self.partitions()
        return {"topics": len(self.topics), "partitions": len(parts),
                "under_replicated": sum(p.under_replicated for p in parts),
                "offline": sum(p.offline for p in parts), "reassigning": sum(p.reassigning for p in parts)}


def read_cluster(admin: AdminZkClient, zookeeper: str = "") -> ClusterView:
    """Read the whole view from ZooKeeper (/controller, /controller_epoch, /brokers/ids, /brokers/topics and the
    partition state znodes, /admin/*)."""
    controller = admin.get_controller_id()
    epoch = admin.get_controller_epoch()
    brokers = tuple(BrokerView(b.id, tuple(ep.connection_string for ep in b.endpoints), b.rack, b.epoch)
                    for b in admin.get_all_brokers_in_cluster())
    live = {b.id for b in brokers}
    pending = admin.get_partition_reassignment()
    deleting = set(admin.get_topic_deletions())
    topics = []
    for name in admin.get_all_topics_in_cluster():
        infos = read_partitions(admin, name)
        if infos is None:
            continue
        views = tuple(PartitionView(i, i.is_under_replicated, i.is_unavailable(live),
                                    i.is_reassigning or TopicPartition(name, i.partition) in pending,
                                    pending.get(TopicPartition(name, i.partition))) for i in infos)
        topics.append(TopicView(name, name in deleting, admin.fetch_topic_config(name), views))
    return ClusterView(zookeeper, controller, epoch[0] if epoch else None, brokers, tuple(topics), pending,
                       frozenset(admin.get_preferred_replica_election()))


def to_json(view: ClusterView, end_offsets: Mapping[tuple[str, int], int] | None = None) -> dict[str, Any]:
    """A machine-readable form of the view (stable keys); ``end_offset`` per partition only when ``end_offsets``
    were read (--bootstrap-server), None for a partition whose leader did not answer."""
    return {
        "zookeeper": view.zookeeper,
        "controller": {"id": view.controller_id, "epoch": view.controller_epoch},
        "brokers": [{"id": b.id, "endpoints": list(b.endpoints), "rack": b.rack, "epoch": b.epoch,
                     "controller": b.id == view.controller_id} for b in view.brokers],
        "topics": [{
            "name": t.name, "marked_for_deletion": t.marked_for_deletion, "config": t.config,
            "partitions": [{
                "partition": p.info.partition, "leader": p.info.leader, "leader_epoch": p.info.leader_epoch,
                "controller_epoch": p.info.controller_epoch, "isr": list(p.info.isr),
                "replicas": list(p.info.replicas), "adding_replicas": list(p.info.adding),
                "removing_replicas": list(p.info.removing),
                "reassignment_target": None if p.pending_target is None else list(p.pending_target),
                "under_replicated": p.under_replicated, "offline": p.offline, "reassigning": p.reassigning,
                **({} if end_offsets is None else {"end_offset": end_offsets.get((t.name, p.info.partition))}),
            } for p in t.partitions]} for t in view.topics],
        "pending_reassignment": [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r)}
                                 for tp, r in sorted(view.pending_reassignment.items())],
        "pending_preferred_replica_election": [{"topic": tp.topic, "partition": tp.partition}
                                               for tp in sorted(view.pending_preferred_election)],
        "summary": view.counts(),
    }


def render(view: ClusterView, acks: AckSnapshot | None = None,
           end_offsets: Mapping[tuple[str, int], int] | None = None) -> Any:
    """A rich renderable: header panel, brokers table, partitions table (colors: red offline, yellow
    under-replicated, cyan reassigning). With ``end_offsets`` (ListOffsets through Kafka's protocol) an "End
    offset" column; with ``acks`` (a live producer's delivery reports, kactor/admin/acks.py) a producer line in the
    header and its columns on the produced topic's rows."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    c = view.counts()
    head = Text()
    head.append("Controller: ", style="bold")
    if view.controller_id is None:
        head.append("none", style="bold red")
    else:
        head.append(f"broker {view.controller_id}", style="bold green")
    head.append(f"   Controller epoch: {'-' if view.controller_epoch is None else view.controller_epoch}")
    head.append(f"   Brokers: {len(view.brokers)}   Topics: {c['topics']}   Partitions: {c['partitions']}\n")
    head.append("Under-replicated: ")
    head.append(str(c["under_replicated"]), style="bold yellow" if c["under_replicated"] else "green")
    head.append("   Offline: ")
    head.append(str(c["offline"]), style="bold red" if c["offline"] else "green")
    head.append("   Reassigning: ")
    head.append(str(c["reassigning"]), style="bold cyan" if c["reassigning"] else "green")
    if view.pending_preferred_election:
        head.append(f"   Preferred election pending: {len(view.pending_preferred_election)} partitions",
                    style="magenta")
    if acks is not None:
        head.append("\n")
        head.append_text(_producer_line(acks))
    header = Panel(head, title=f"kactor cluster @ {view.zookeeper}" if view.zookeeper else "kactor cluster",
                   expand=False)

    brokers = Table(title="Brokers", title_justify="left")
    for col in ("ID", "Endpoints", "Rack", "Epoch (czxid)", "Role"):
        brokers.add_column(col)
    for b in view.brokers:
        role = Text("controller", style="bold green") if b.id == view.controller_id else Text("")
        brokers.add_row(str(b.id), ", ".join(b.endpoints), b.rack or "-", str(b.epoch), role)
    if not view.brokers:
        brokers.add_row(Text("no broker registered", style="red"), "", "", "", "")

    live = {b.id for b in view.brokers}
    parts = Table(title="Partitions", title_justify="left")
    extra = (("End offset",) if end_offsets is not None else ()) + (ACK_COLUMNS if acks is not None else ())
    for col in ("Topic", "Partition", "Leader", "Leader epoch", "ISR", "Replicas", "Status", *extra):
        parts.add_column(col, justify="left" if col in ("Topic", "ISR", "Replicas", "Status") else "right")
    for t in view.topics:
        for p in t.partitions:
            i = p.info
            style = "red" if p.offline else "yellow" if p.under_replicated else "cyan" if p.reassigning else ""
            replicas = Text()
            for k, r in enumerate(i.replicas):
                if k:
                    replicas.append(",")
                replicas.append(str(r), style="dim" if r not in i.isr or r not in live else
                                ("bold" if r == i.leader else ""))
            status = p.status
            if p.pending_target is not None:
                status += " → " + ",".join(map(str, p.pending_target))
            if i.adding or i.removing:
                status += f" (+{','.join(map(str, i.adding)) or '-'} -{','.join(map(str, i.removing)) or '-'})"
            if t.marked_for_deletion:
                status += " [deleting]"
            cells: list[Any] = []
            if end_offsets is not None:
                end = end_offsets.get((t.name, i.partition))
                cells.append("-" if end is None else str(end))
            if acks is not None:
                cells += _ack_cells(acks.partitions.get(i.partition) if t.name == acks.topic else None)
            parts.add_row(t.name, str(i.partition), "none" if i.leader is None else str(i.leader),
                          "-" if i.leader_epoch is None else str(i.leader_epoch), ",".join(map(str, i.isr)),
                          replicas, Text(status, style=style or "green"), *cells)
    if not view.topics:
        parts.add_row(Text("no topic", style="dim"), *([""] * (6 + len(extra))))
    return Group(header, brokers, parts)


ACK_COLUMNS = ("Acked offset", "Acks/s", "Last ack", "Max gap", "Waiting", "Failed")
STALL_S = 1.0  # records waiting this long without an acknowledgement are shown as a stall


def stalled(p: PartitionAcks) -> bool:
    """Records wait for an answer and none came for STALL_S, or none ever came."""
    return p.in_flight > 0 and (p.since_last_ack_s is None or p.since_last_ack_s >= STALL_S)


def producer_health(acks: AckSnapshot) -> list[Any]:
    """What of the producer's state is worth a new frame where ``--watch`` prints only changes: per partition
    whether records were sent, whether any was acknowledged and whether it stalls; the failures; the longest pause
    in whole seconds. Not every acknowledgement (that would be a frame each refresh), but the first one is: a
    frame drawn before the producer sent anything must be followed by one with its acknowledgements."""
    return [acks.failed, round(acks.max_gap_s),
            sorted([n, p.acked > 0, stalled(p)] for n, p in acks.partitions.items())]


def _seconds(s: float | None) -> str:
    return "-" if s is None else f"{s:.1f}s"


def _ack_cells(p: PartitionAcks | None) -> list[Any]:
    """The producer's columns for one partition: the last acknowledged offset, acks/s over the last seconds, the
    time since the last ack (red while records wait longer than STALL_S), the longest pause between two acks,
    records waiting for an answer, failed records with the last error."""
    from rich.text import Text

    if p is None:
        return [""] * len(ACK_COLUMNS)
    waiting = stalled(p)
    last = Text(_seconds(p.since_last_ack_s) + (" waiting" if waiting else ""), style="bold red" if waiting else "")
    failed = Text(f"{p.failed} ({p.last_error})" if p.failed else "0", style="yellow" if p.failed else "")
    return ["-" if p.last_offset < 0 else str(p.last_offset), f"{p.rate:.1f}", last,
            Text(_seconds(p.max_gap_s), style="yellow" if p.max_gap_s >= STALL_S else ""), str(p.in_flight), failed]


def _producer_line(acks: AckSnapshot) -> Any:
    from rich.text import Text

    line = Text()
    line.append("Producer → ", style="bold")
    line.append(f"{acks.topic} (acks={acks.acks}, {acks.target_rate:g}/s): {acks.acked} acknowledged, ")
    line.append(f"{acks.failed} failed", style="bold yellow" if acks.failed else "")
    line.append(f", {acks.in_flight} waiting, longest pause {acks.max_gap_s:.1f}s")
    return line


def render_error(zookeeper: str, message: str) -> Any:
    """What --watch shows while ZooKeeper cannot be read."""
    from rich.panel import Panel
    from rich.text import Text

    return Panel(Text(message, style="bold red"), title=f"kactor cluster @ {zookeeper}", expand=False)

