"""topic-churn: create, then delete, 1,000 topics × 10 partitions, RF 3, on 3 brokers: topics/s each way.

Creation is what kafka-topics --create does (one /brokers/topics/<t> znode per topic, written here pipelined); it is
complete when every partition's state znode exists. Deletion is kafka-topics --delete (/admin/delete_topics/<t>); it
is complete when /brokers/topics has no child left. Ceiling: pipelined kazoo creates (then deletes) of the znodes the
controller and the admin write for the same topics (topic, /partitions, /partitions/<p>, /state; and the deletion
markers), on scratch paths of the same ZooKeeper.
"""

from __future__ import annotations

import time

from bench import common as c
from protocol.zk import paths

ANCHOR = "no published per-topic rate; Kafka 2.2 deleting 50 × 100 partitions wrote 158 MB of controller log (PR #6738)"


def _missing_states(zk, missing):  # type: ignore[no-untyped-def]
    """The (topic, partition)s of ``missing`` whose state znode does not exist yet (pipelined exists)."""
    found: set = set()

    def call(k):  # type: ignore[no-untyped-def]
        def go():  # type: ignore[no-untyped-def]
            ar = zk.exists_async(c.state_path(*k))
            ar.rawlink(lambda a: found.add(k) if a.successful() and a.get_nowait() is not None else None)
            return ar
        return go

    c.pipelined(call(k) for k in missing)
    return [k for k in missing if k not in found]


def ceiling(zk, topics: int, partitions: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    base = "/kactor-bench-churn"
    zk.ensure_path(base)
    nodes: list[str] = []
    for t in range(topics):
        tp = f"{base}/t{t}"
        nodes += [tp, f"{tp}/partitions"]
        for p in range(partitions):
            nodes += [f"{tp}/partitions/{p}", f"{tp}/partitions/{p}/state"]
        nodes.append(f"{base}/d{t}")
    data = c.state_json(1, [0, 1, 2])
    create_s, r = c.pipelined(lambda n=n: zk.create_async(n, data) for n in nodes)
    delete_s, r2 = c.pipelined(lambda n=n: zk.delete_async(n) for n in reversed(nodes))
    zk.delete(base, recursive=True)
    if c.errors(r) or c.errors(r2):
        raise RuntimeError("churn ceiling failed")
    return create_s, delete_s


def run(scale: float = 1.0, runs: int = 3, tmpfs: bool = False) -> c.Result:
    n_topics = c.scale_count(1000, scale)
    partitions = 10
    load_before = c.load_average()
    create_rates: list[float] = []
    delete_rates: list[float] = []
    ceil_create: list[float] = []
    ceil_delete: list[float] = []
    with c.BenchCluster(3, {}, tmpfs=tmpfs) as bc:
        zk = bc.zk
        zk.ensure_path(paths.DeleteTopicsZNode)
        for i in range(runs):
            layout = c.assignment(n_topics, partitions, 3, 3, prefix=f"churn{i}-")
            keys = [(t, p) for t, parts in layout.items() for p in parts]
            t0 = time.perf_counter()
            c.pipelined(lambda t=t, parts=parts: zk.create_async(paths.TopicZNode.path(t), c.topic_json(t, parts))
                        for t, parts in layout.items())
            missing = keys
            while missing:
                missing = _missing_states(zk, missing)
                if missing:
                    time.sleep(0.2)
            create_s = time.perf_counter() - t0
            bc.layout = layout  # quiet at the idle fetch load of these partitions (BenchCluster.idle_busy)
            bc.settle()
            t0 = time.perf_counter()
            c.pipelined(lambda t=t: zk.create_async(paths.DeleteTopicsTopicZNode.path(t)) for t in layout)
            c.wait_for(lambda: not zk.get_children(paths.TopicsZNode), 1800, "every topic deleted", interval=0.2)
            delete_s = time.perf_counter() - t0
            bc.layout = {}
            bc.settle()
            cc, cd = ceiling(zk, n_topics, partitions)
            create_rates.append(n_topics / create_s)
            delete_rates.append(n_topics / delete_s)
            ceil_create.append(n_topics / cc)
            ceil_delete.append(n_topics / cd)
            print(f"  run {i + 1}: created in {create_s:.2f} s, deleted in {delete_s:.2f} s; ceiling {cc:.2f} s / "
                  f"{cd:.2f} s", flush=True)
    return c.Result(
        name="topic-churn", scale_text=f"3 brokers, {n_topics:,} topics × {partitions} partitions, RF 3"
        + (", ZK on tmpfs" if tmpfs else ""),
        figure_label="topics created per second (topic znodes → every state znode)",
        figure=c.Measure(create_rates, "topics/s"),
        ceiling_label="pipelined creates of the same znodes", ceiling=c.Measure(ceil_create, "topics/s"),
        anchor=ANCHOR, higher_is_better=True,
        extra={"topics deleted per second": c.Measure(delete_rates, "topics/s"),
               "deletion ceiling (pipelined deletes)": c.Measure(ceil_delete, "topics/s")},
        load_before=load_before, load_after=c.load_average())
