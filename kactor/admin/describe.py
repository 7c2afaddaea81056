"""A live view of a kactor (= Kafka 2.6 ZooKeeper-mode) cluster, read from ZooKeeper alone: controller and epoch,
registered brokers, and every partition's leader / leader epoch / ISR / replicas with under-replicated, offline
and reassigning partitions marked. There is no single Kafka tool for this; it combines what
``kafka-topics.sh --describe`` and ``zookeeper-shell.sh`` show. Rendered as a rich table or as JSON.
"""

from __future__ import annotations

from typing import Any

import attrs

from kactor.admin.admin_zk import AdminZkClient
from kactor.admin.topics import PartitionInfo, read_partitions
from messages.common import TopicPartition


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


def to_json(view: ClusterView) -> dict[str, Any]:
    """A machine-readable form of the view (stable keys)."""
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
            } for p in t.partitions]} for t in view.topics],
        "pending_reassignment": [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r)}
                                 for tp, r in sorted(view.pending_reassignment.items())],
        "pending_preferred_replica_election": [{"topic": tp.topic, "partition": tp.partition}
                                               for tp in sorted(view.pending_preferred_election)],
        "summary": view.counts(),
    }


def render(view: ClusterView) -> Any:
    """A rich renderable: header panel, brokers table, partitions table (colors: red offline, yellow
    under-replicated, cyan reassigning)."""
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
    for col in ("Topic", "Partition", "Leader", "Leader epoch", "ISR", "Replicas", "Status"):
        parts.add_column(col, justify="right" if col in ("Partition", "Leader epoch") else "left")
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
            parts.add_row(t.name, str(i.partition), "none" if i.leader is None else str(i.leader),
                          "-" if i.leader_epoch is None else str(i.leader_epoch), ",".join(map(str, i.isr)),
                          replicas, Text(status, style=style or "green"))
    if not view.topics:
        parts.add_row(Text("no topic", style="dim"), "", "", "", "", "", "")
    return Group(header, brokers, parts)


def render_error(zookeeper: str, message: str) -> Any:
    """What --watch shows while ZooKeeper cannot be read."""
    from rich.panel import Panel
    from rich.text import Text

    return Panel(Text(message, style="bold red"), title=f"kactor cluster @ {zookeeper}", expand=False)

