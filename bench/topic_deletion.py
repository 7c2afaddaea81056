"""topic_deletion: delete 50 topics × 100 partitions (RF 3, 3 brokers) at once; time until every topic is gone and
trace bytes per deleted partition (issue #6; performance-anchors G6).

``.venv/bin/python -m bench.topic_deletion [--topics 50] [--partitions 100] [--runs 1] [--tmpfs] [--keep]
[--profile DIR] [--no-doc]``

Set-up (bench.common.BenchCluster): the topic znodes and partition state znodes are written straight into a real
ZooKeeper, then 3 broker processes start; the first controller sends LeaderAndIsr for every replica and the brokers
create their 15,000 logs. Once the cluster is quiet, every /admin/delete_topics/<t> marker is created in one multi
(as 50 ``kafka-topics --delete`` would, without 50 process starts).

Figure: wall time from that multi to the moment /brokers/topics, /config/topics and /admin/delete_topics are all
empty, polled every 50 ms (so it includes the StopReplica(delete=true) round trips and the log-dir removals).
Afterwards: no ``<topic>-<p>`` dir may remain in any broker's log dir (a stuck or half-deleted topic fails the run).
Trace bytes: growth of all brokers' trace files over the deletion (measured once the cluster is quiet again and the
trace writers have flushed), divided by the number of deleted partitions; the controller's own share is shown too.

Ceiling (same run, same ZooKeeper): the same znodes — per topic its state, partition and ``partitions`` znodes, the
topic znode, its config znode and its delete marker — created under a scratch chroot and deleted with kazoo's async
API, pipelined, children first. It is what ZooKeeper allows for the deletes alone; the ratio says what the
controller, the brokers and their round trips cost on top.
"""

from __future__ import annotations

import argparse
import os
import time

from bench import common as c
from messages.common import TopicPartition
from protocol.zk import paths, znodes

ANCHOR = ("Kafka 2.2 PR #6738: this workload wrote ~158 MB of controller log, ~1.5 MB after batched StopReplica "
          "(≈300 B/partition)")
CHROOT = "/kactor-bench-deletion-ceiling"


def _trace_bytes(trace_dir: str, brokers: int) -> dict[int, int]:
    return {b: sum(os.path.getsize(p) for p in c.trace_files(trace_dir, b)) for b in range(brokers)}


TOPIC_CONFIGS = paths.ConfigEntityTypeZNode.path("topics")
EMPTY_CONFIG = znodes.encode_config_entity({}).encode()


def _config_path(topic: str) -> str:
    return paths.ConfigEntityZNode.path("topics", topic)


def _leftover_dirs(bc: c.BenchCluster, topics: set[str]) -> list[str]:
    out = []
    for b in range(bc.n):
        d = os.path.join(bc.lc.base_dir, f"broker-{b}")
        if os.path.isdir(d):
            # topic names here have no "-": "<t>-<p>" and "<t>-<p>.<uuid>-delete" both start with "<t>-"
            out += [f"broker-{b}/{n}" for n in os.listdir(d) if n.split("-")[0] in topics]
    return sorted(out)


def _all_gone(zk) -> bool:  # type: ignore[no-untyped-def]
    return not (zk.get_children(paths.TopicsZNode) or zk.get_children(paths.DeleteTopicsZNode)
                or zk.get_children(TOPIC_CONFIGS))


def ceiling_deletes(server_connect: str, layout: dict[str, dict[int, list[int]]]) -> float:
    """Pipelined kazoo deletes of the znodes a topic deletion removes, children first, on a scratch chroot."""
    root = c.connect(server_connect)
    root.ensure_path(CHROOT)
    c.close(root)
    zk = c.connect(server_connect + CHROOT)
    try:
        c.populate(zk, layout, with_state=True)
        zk.ensure_path(TOPIC_CONFIGS)
        zk.ensure_path(paths.DeleteTopicsZNode)
        _, r = c.pipelined((lambda t=t: zk.create_async(_config_path(t), EMPTY_CONFIG)) for t in layout)
        _, r2 = c.pipelined((lambda t=t: zk.create_async(paths.DeleteTopicsTopicZNode.path(t), b"")) for t in layout)
        if c.errors(r) or c.errors(r2):
            raise RuntimeError(f"ceiling set-up failed: {(c.errors(r) + c.errors(r2))[0]!r}")
        order: list[str] = []
        for t, parts in layout.items():
            for p in sorted(parts):
                order += [c.state_path(t, p), paths.TopicPartitionZNode.path(TopicPartition(t, p))]
            order += [paths.TopicPartitionsZNode.path(t), paths.TopicZNode.path(t), _config_path(t),
                      paths.DeleteTopicsTopicZNode.path(t)]
        # one session's requests are applied in order, so children issued first are gone before their parent
        secs, r = c.pipelined((lambda p=p: zk.delete_async(p)) for p in order)
        if c.errors(r):
            raise RuntimeError(f"ceiling deletes failed: {c.errors(r)[0]!r}")
        return secs
    finally:
        c.close(zk)
        root = c.connect(server_connect)
        root.delete(CHROOT, recursive=True)
        c.close(root)


def _start_profilers(bc: c.BenchCluster, controller: int | None, out_dir: str) -> list:  # type: ignore[type-arg]
    """py-spy (raw format, 200 Hz) on the controller's process and on one other broker, for the deletion window."""
    import subprocess
    import sys
    os.makedirs(out_dir, exist_ok=True)
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    others = [b for b in range(bc.n) if b != controller]
    procs = []
    for role, b in (("controller", controller), ("broker", others[0] if others else None)):
        if b is None or b not in bc.lc.procs:
            continue
        out = os.path.join(out_dir, f"{role}-broker-{b}.txt")
        procs.append(subprocess.Popen([spy, "record", "-r", "200", "--format", "raw", "-p", str(bc.lc.procs[b].pid),
                                       "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1.0)  # py-spy attaches
    return procs


def _stop_profilers(procs: list) -> None:  # type: ignore[type-arg]
    import signal
    for p in procs:
        p.send_signal(signal.SIGINT)
    for p in procs:
        p.wait(30)


def run_once(topics: int, partitions: int, tmpfs: bool, keep: bool = False,
             profile: str | None = None) -> dict[str, float]:
    layout = c.assignment(topics, partitions, 3, 3)
    names = set(layout)
    with c.BenchCluster(3, layout, with_state=True, tmpfs=tmpfs, keep=keep) as bc:
        if keep:
            print(f"cluster dir (kept): {bc.base}", flush=True)
        zk = bc.zk
        assert zk is not None and bc.trace_dir is not None
        # the controller creates /config/topics/<t> only through the admin path: write them as kafka-topics does
        zk.ensure_path(TOPIC_CONFIGS)
        c.pipelined((lambda t=t: zk.create_async(_config_path(t), EMPTY_CONFIG)) for t in layout)
        c.wait_for(lambda: all(len(os.listdir(os.path.join(bc.lc.base_dir, f"broker-{b}"))) >= len(layout)
                               * partitions for b in range(3)), 600, "every broker's logs created")
        bc.settle()
        time.sleep(1.5)  # trace writers flush every second
        controller = bc.controller()
        before = _trace_bytes(bc.trace_dir, 3)

        zk.ensure_path(paths.DeleteTopicsZNode)
        profilers = _start_profilers(bc, controller, profile) if profile else []
        txn = zk.transaction()
        for t in sorted(layout):
            txn.create(paths.DeleteTopicsTopicZNode.path(t), b"")
        t0 = time.monotonic()
        results = txn.commit()
        if any(isinstance(r, BaseException) for r in results):
            raise RuntimeError(f"creating the delete markers failed: {results}")
        c.wait_for(lambda: _all_gone(zk), 1800, "every topic deleted", interval=0.05)
        elapsed = time.monotonic() - t0
        _stop_profilers(profilers)

        bc.settle()
        time.sleep(1.5)
        left = _leftover_dirs(bc, names)
        if left:
            raise RuntimeError(f"{len(left)} log dirs left after deletion, e.g. {left[:5]}")
        after = _trace_bytes(bc.trace_dir, 3)
        deleted = topics * partitions
        grown = {b: after[b] - before[b] for b in after}
        ceiling = ceiling_deletes(bc.server.connect_string, layout)
        return {"elapsed_s": elapsed, "ceiling_s": ceiling, "trace_bytes": float(sum(grown.values())),
                "trace_per_partition": sum(grown.values()) / deleted,
                "controller_trace_per_partition": grown[controller] / deleted if controller is not None else -1.0,
                "partitions": float(deleted)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.topic_deletion", description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, default=50)
    p.add_argument("--partitions", type=int, default=100)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--tmpfs", action="store_true", help="ZooKeeper data, logs and traces on /dev/shm")
    p.add_argument("--keep", action="store_true", help="keep the cluster's folder (traces, broker logs)")
    p.add_argument("--profile", metavar="DIR", help="py-spy record (raw, 200 Hz) the controller's process and one "
                   "other broker during the deletion, into DIR; not appended to the doc (py-spy slows the run 2-4x)")
    p.add_argument("--no-doc", action="store_true", help="print the result without appending it to docs/performance.md")
    a = p.parse_args(argv)
    load_before = c.load_average()
    runs = [run_once(a.topics, a.partitions, a.tmpfs, a.keep, a.profile) for _ in range(a.runs)]
    figure = c.Measure([r["elapsed_s"] for r in runs])
    ceiling = c.Measure([r["ceiling_s"] for r in runs])
    result = c.Result(
        name="topic-deletion", scale_text=f"{a.topics} topics × {a.partitions} partitions, RF 3, 3 brokers"
        + (", tmpfs" if a.tmpfs else ""),
        figure_label="all topics deleted (znodes and logs)", figure=figure,
        ceiling_label="kazoo pipelined deletes of the same znodes", ceiling=ceiling, anchor=ANCHOR,
        extra={"trace bytes per deleted partition (3 brokers)": c.Measure([r["trace_per_partition"] for r in runs],
                                                                          "B"),
               "controller's trace bytes per deleted partition": c.Measure(
                   [r["controller_trace_per_partition"] for r in runs], "B"),
               "trace bytes in total": c.Measure([r["trace_bytes"] for r in runs], "B")},
        notes=["0 stuck topics, no log dir left"], load_before=load_before, load_after=c.load_average())
    command = (f"python -m bench.topic_deletion --topics {a.topics} --partitions {a.partitions} --runs {a.runs}"
               + (" --tmpfs" if a.tmpfs else ""))
    c.report(result, command, write_doc=not (a.no_doc or a.profile))  # printed, and appended to docs/performance.md
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
