"""Idle broker CPU under many partitions (issue #5): ``python -m bench.broker_idle_cpu --partitions 10000``.

One LocalCluster (embedded ZooKeeper + 3 broker processes). First the *baseline*: the cluster with no topic, CPU of
each broker process over ``--duration`` seconds. Then ``--partitions`` partitions with replication factor 3 are
created by writing the topic znodes directly (topics of ``--per-topic`` partitions, ``/brokers/topics/<t>`` JSON v2,
replicas rotated so every broker leads a third), the controller elects every leader, each broker hosts every
partition (3 brokers, RF 3), and once every state znode shows a full ISR and ``--settle`` seconds passed, the same
measure runs again. CPU = (utime + stime) of /proc/<pid>/stat over the window, as % of one core.

Idle means no produce: followers long-poll their leaders (one batched FetchRequest per leader per
replica.fetch.wait.max.ms), and the periodic tasks (isr-expiration, isr-change-propagation, HW checkpoint) run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from kazoo.client import KazooClient

from kactor.cluster import LocalCluster
from messages.common import ReplicaAssignment, TopicPartition
from protocol.zk import paths, znodes

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (/proc/<pid>/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields[0] is field 3 (state)


def measure(pids: dict[int, int], duration_s: float) -> dict[int, float]:
    """CPU % of one core per broker over ``duration_s``."""
    start = {b: cpu_seconds(p) for b, p in pids.items()}
    t0 = time.monotonic()
    time.sleep(duration_s)
    elapsed = time.monotonic() - t0
    return {b: 100.0 * (cpu_seconds(p) - start[b]) / elapsed for b, p in pids.items()}


def create_partitions(zk: KazooClient, brokers: int, partitions: int, per_topic: int) -> list[str]:
    """Write topic znodes (JSON v2) directly; returns the topic names."""
    topics = []
    left, t = partitions, 0
    while left > 0:
        n = min(per_topic, left)
        topic = f"idle-{t}"
        rf = min(3, brokers)
        assignment = {TopicPartition(topic, p): ReplicaAssignment(tuple((p + i) % brokers for i in range(rf)))
                      for p in range(n)}
        zk.create(paths.TopicZNode.path(topic), znodes.encode_topic_assignment(assignment).encode())
        topics.append(topic)
        left -= n
        t += 1
    return topics


def count_settled(zk: KazooClient, topics: list[str], per_topic: int, rf: int) -> int:
    """How many partitions have a state znode with a leader and a full ISR (reads pipelined with kazoo async)."""
    done = 0
    for topic in topics:
        try:
            children = zk.get_children(paths.TopicPartitionsZNode.path(topic))
        except Exception:  # noqa: BLE001 - not created yet
            continue
        futures = [zk.get_async(paths.TopicPartitionStateZNode.path(TopicPartition(topic, int(p)))) for p in children]
        for fut in futures:
            try:
                data, _ = fut.get(timeout=30)
            except Exception:  # noqa: BLE001 - state not written yet
                continue
            info = znodes.decode_partition_state(data.decode(), 0)
            if info is not None and info.leader_and_isr.leader >= 0 and len(info.leader_and_isr.isr) == rf:
                done += 1
    return done


def profile(pids: dict[int, int], out_dir: str, seconds: int = 20) -> None:
    """py-spy record of every broker at once (collapsed stacks), then the top inclusive frames of each."""
    import subprocess
    from collections import Counter

    os.makedirs(out_dir, exist_ok=True)
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    procs = {b: subprocess.Popen([spy, "record", "-p", str(pid), "-d", str(seconds), "-r", "50", "-f", "raw",
                                  "-o", os.path.join(out_dir, f"broker-{b}.txt"), "--nonblocking"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for b, pid in pids.items()}
    for p in procs.values():
        p.wait()
    for b in sorted(pids):
        inclusive: Counter[str] = Counter()
        total = 0
        with open(os.path.join(out_dir, f"broker-{b}.txt"), encoding="utf-8") as f:
            for line in f:
                stack, _, n = line.rstrip().rpartition(" ")
                frames = [fr for fr in stack.split(";") if "(threading.py)" not in fr]
                if not frames or "wait" in frames[-1] or "select" in frames[-1]:
                    continue  # idle threads
                total += int(n)
                for fr in set(frames):
                    inclusive[fr] += int(n)
        print(f"broker {b}: {total} busy samples; top inclusive frames:")
        for fr, n in inclusive.most_common(25):
            print(f"  {n:6d}  {fr}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.broker_idle_cpu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=10000)
    ap.add_argument("--per-topic", type=int, default=1000)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--duration", type=float, default=30.0, help="measure window, seconds (default 30)")
    ap.add_argument("--settle", type=float, default=15.0, help="seconds to wait after the cluster settled")
    ap.add_argument("--timeout", type=float, default=900.0, help="max seconds to wait for the partitions")
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="a broker property")
    ap.add_argument("--keep", action="store_true", help="keep the data dir")
    ap.add_argument("--profile", metavar="DIR", help="after measuring, record each broker with py-spy (20 s, "
                                                     "collapsed stacks) into DIR")
    args = ap.parse_args(argv)

    base = tempfile.mkdtemp(prefix="kactor-idle-cpu-")
    lc = LocalCluster(args.brokers, base_dir=base, overrides=args.override, log_level="WARNING")
    rf = min(3, args.brokers)
    try:
        lc.start()
        zk = lc.client()
        lc.wait_registered(zk, 60)
        lc.wait_for(lambda: lc.controller_id(zk) is not None, 60, "a controller")
        pids = {b: p.pid for b, p in lc.procs.items()}
        time.sleep(args.settle)
        baseline = measure(pids, args.duration)
        print(f"baseline (0 partitions), {args.duration:g} s: "
              + ", ".join(f"broker {b} {v:.2f}%" for b, v in sorted(baseline.items())), flush=True)

        t0 = time.monotonic()
        topics = create_partitions(zk, args.brokers, args.partitions, args.per_topic)
        deadline = t0 + args.timeout
        settled = 0
        while time.monotonic() < deadline:
            settled = count_settled(zk, topics, args.per_topic, rf)
            if settled == args.partitions:
                break
            time.sleep(2)
        took = time.monotonic() - t0
        if settled != args.partitions:
            print(f"only {settled} of {args.partitions} partitions settled within {args.timeout:g} s", flush=True)
            return 1
        print(f"{args.partitions} partitions (RF {rf}) online with full ISR after {took:.1f} s", flush=True)
        time.sleep(args.settle)
        for b in pids:
            if lc.procs[b].poll() is not None:
                print(f"broker {b} died; see {lc.logs[b]}")
                return 1
        loaded = measure(pids, args.duration)
        print(f"idle with {args.partitions} partitions per broker, {args.duration:g} s window:")
        worst = 0.0
        for b in sorted(loaded):
            ratio = loaded[b] / baseline[b] if baseline[b] > 0 else float("inf")
            worst = max(worst, loaded[b])
            print(f"  broker {b}: {loaded[b]:.2f}% of one core (baseline {baseline[b]:.2f}%, ratio {ratio:.1f}x)")
        print(f"max {worst:.2f}% — {'under' if worst < 25 else 'OVER'} the 25% budget", flush=True)
        if args.profile:
            profile(pids, args.profile)
        zk.stop()
        zk.close()
        return 0 if worst < 25 else 2
    finally:
        lc.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            print(f"data kept in {base}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
