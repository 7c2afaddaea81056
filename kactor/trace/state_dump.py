"""The state a replayed broker process ends in: its controller context and its replica manager shards.

`dump_state` gives plain JSON-able data (sorted, so two dumps compare with ==); `render_state` prints it as tables.
"""

from __future__ import annotations

from typing import Any

from actors import names


def _controller_state(controller: Any) -> dict[str, Any]:
    core = getattr(controller, "controller", None)
    if core is None:
        return {"initialised": False}
    ctx = core.ctx
    partitions = []
    for tp in sorted(ctx.all_partitions()):
        info = ctx.partition_leadership_info(tp)
        state = ctx.partition_states.get(tp)
        partitions.append({
            "topic": tp.topic, "partition": tp.partition,
            "replicas": list(ctx.partition_replica_assignment(tp)),
            "leader": info.leader_and_isr.leader if info else None,
            "leader_epoch": info.leader_and_isr.leader_epoch if info else None,
            "isr": list(info.leader_and_isr.isr) if info else [],
            "zk_version": info.leader_and_isr.zk_version if info else None,
            "state": state.name if state is not None else None,
        })
    replica_states: dict[str, int] = {}
    replicas = []
    for pr, st in ctx.replica_states.items():
        replica_states[st.name] = replica_states.get(st.name, 0) + 1
        replicas.append({"topic": pr.topic_partition.topic, "partition": pr.topic_partition.partition,
                         "replica": pr.replica, "state": st.name})
    replicas.sort(key=lambda r: (r["topic"], r["partition"], r["replica"]))
    return {
        "initialised": True,
        "broker_id": core.broker_id,
        "active": bool(core.is_active() if callable(core.is_active) else core.is_active),
        "active_controller_id": core.active_controller_id,
        "controller_epoch": ctx.epoch,
        "controller_epoch_zk_version": ctx.epoch_zk_version,
        "live_brokers": sorted(ctx.live_or_shutting_down_broker_ids()),
        "broker_epochs": {str(b): e for b, e in sorted(ctx.live_broker_id_and_epochs().items())},
        "shutting_down_brokers": sorted(ctx.shutting_down_broker_ids),
        "topics": sorted(ctx.all_topics),
        "topics_to_be_deleted": sorted(ctx.topics_to_be_deleted),
        "topics_with_deletion_started": sorted(getattr(ctx, "topics_with_deletion_started", ())),
        "topics_ineligible_for_deletion": sorted(getattr(ctx, "topics_ineligible_for_deletion", ())),
        "partitions_being_reassigned": [f"{tp.topic}-{tp.partition}" for tp in sorted(ctx.partitions_being_reassigned)],
        "partitions": partitions,
        "replica_states": dict(sorted(replica_states.items())),
        "replicas": replicas,
    }


def _replica_manager_state(shards: list[Any]) -> dict[str, Any]:
    hosted = []
    totals: dict[str, int] = {}
    for shard in shards:
        rm = getattr(shard, "rm", None)
        if rm is None:
            continue
        for name, value in rm.metrics().items():
            totals[name] = totals.get(name, 0) + value
        for p in rm.online_partitions():
            log = p.log
            hosted.append({
                "topic": p.topic_partition.topic, "partition": p.topic_partition.partition,
                "shard": shard.shard, "leader": p.leader_replica_id,
                "leader_epoch": p.leader_epoch, "isr": sorted(p.in_sync_replica_ids),
                "log_end_offset": log.log_end_offset if log is not None else None,
                "high_watermark": log.high_watermark if log is not None else None,
            })
    hosted.sort(key=lambda h: (h["topic"], h["partition"]))
    return {"metrics": dict(sorted(totals.items())), "partitions": hosted}


def dump_state(runtime: Any) -> dict[str, Any]:
    inst = runtime.instances
    shards = [a for n, a in sorted(inst.items()) if n.startswith(names.SHARD_PREFIX)]
    return {
        "process": runtime.process_name,
        "controller": _controller_state(inst.get(names.CONTROLLER)),
        "replica_manager": _replica_manager_state(shards),
    }


def render_state(state: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    c = state["controller"]
    if c.get("initialised"):
        role = "active controller" if c["active"] else f"not controller (active: {c['active_controller_id']})"
        console.print(f"[bold]{state['process']}[/]: {role}, controller epoch {c['controller_epoch']}, "
                      f"live brokers {c['live_brokers']}, topics {len(c['topics'])}, "
                      f"to delete {c['topics_to_be_deleted']}")
        if c["active"]:
            t = Table("partition", "state", "replicas", "leader", "epoch", "isr", "zkVersion", title="controller")
            for p in c["partitions"]:
                t.add_row(f"{p['topic']}-{p['partition']}", str(p["state"]), str(p["replicas"]), str(p["leader"]),
                          str(p["leader_epoch"]), str(p["isr"]), str(p["zk_version"]))
            console.print(t)
    rm = state["replica_manager"]
    t = Table("partition", "shard", "leader", "epoch", "isr", "LEO", "HW", title="replica manager")
    for p in rm["partitions"]:
        t.add_row(f"{p['topic']}-{p['partition']}", str(p["shard"]), str(p["leader"]), str(p["leader_epoch"]),
                  str(p["isr"]), str(p["log_end_offset"]), str(p["high_watermark"]))
    console.print(t)
    console.print(" ".join(f"{k}={v}" for k, v in rm["metrics"].items()))
