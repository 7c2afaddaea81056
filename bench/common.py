"""Shared harness of the benchmarks: machine line, pipelined kazoo helpers, ZooKeeper pre-population, ceilings,
trace scanning, and the report (printed, and appended to docs/performance.md).

Every workload measures its figure on real broker processes (kactor.cluster.LocalCluster) and a real ZooKeeper, and
measures in the same run a *ceiling*: what ZooKeeper itself allows for the same znode reads or writes, issued from
this process with kazoo's async API, pipelined (``window`` requests in flight). The ratio figure / ceiling says how
far the actor system is from the store it sits on.

Times inside a broker come from its trace (docs/trace-format.md): ``ts`` is the wall-clock ms at which the external
input that caused a record was delivered, so a span measured between two inputs of the same process is exact, and a
span that ends with an actor's send is measured to the start of the cascade that sent it (see `next_input_after`).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient

from kactor.trace.reader import is_external
from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from protocol.zk import paths, znodes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Results are appended to the checkout's docs/performance.md; an installed kactor (bench/ in site-packages) has none.
IN_CHECKOUT = os.path.isfile(os.path.join(REPO, "pyproject.toml")) and os.path.isdir(os.path.join(REPO, "docs"))
PERF_DOC = os.path.join(REPO, "docs", "performance.md")
SECTION = "## Benchmarks"
FAKE_CONTROLLER_ID = 999
FAKE_CONTROLLER = znodes.encode_controller(FAKE_CONTROLLER_ID, 0).encode()


# -- machine / provenance --------------------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_commit() -> str:
    """The checkout's commit (``+dirty`` with uncommitted changes); an installed kactor's version outside one."""
    if not IN_CHECKOUT:
        from messages.version import __version__

        return f"kactor {__version__}"
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def machine_line() -> str:
    return f"nproc {os.cpu_count()}, {cpu_model()}"


# -- results ---------------------------------------------------------------------------------------------------------
@dataclass
class Measure:
    """One quantity over several runs (seconds, or ops/s when ``unit`` says so)."""

    values: list[float]
    unit: str = "s"

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def text(self) -> str:
        v = self.values
        if not v:
            return "n/a"
        if self.unit == "s":
            return f"{self.median:.2f} s (min {min(v):.2f}, max {max(v):.2f}, n={len(v)})"
        return f"{self.median:,.0f} {self.unit} (min {min(v):,.0f}, max {max(v):,.0f}, n={len(v)})"


@dataclass
class Result:
    name: str
    scale_text: str
    figure_label: str
    figure: Measure
    ceiling_label: str
    ceiling: Measure
    anchor: str
    higher_is_better: bool = False
    extra: dict[str, Measure] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    load_before: str = ""
    load_after: str = ""

    @property
    def ratio(self) -> float | None:
        if not self.figure.values or not self.ceiling.values or self.ceiling.median == 0 or self.figure.median == 0:
            return None
        if self.higher_is_better:
            return self.ceiling.median / self.figure.median
        return self.figure.median / self.ceiling.median

    def lines(self) -> list[str]:
        ratio = self.ratio
        out = [f"{self.name} ({self.scale_text})",
               f"  figure : {self.figure_label}: {self.figure.text()}",
               f"  ceiling: {self.ceiling_label}: {self.ceiling.text()}",
               f"  ratio  : {'n/a' if ratio is None else f'{ratio:.2f}x the ceiling'}",
               f"  anchor : {self.anchor}"]
        for label, m in self.extra.items():
            out.append(f"  also   : {label}: {m.text()}")
        for n in self.notes:
            out.append(f"  note   : {n}")
        out.append(f"  load   : {self.load_before} (before) → {self.load_after} (after)")
        return out

    def doc_line(self, command: str) -> str:
        ratio = self.ratio
        extra = "; ".join(f"{k}: {m.text()}" for k, m in self.extra.items())
        return (f"- {datetime.date.today().isoformat()} `{git_commit()}` ({machine_line()}; load {self.load_before} → "
                f"{self.load_after}) **{self.name}** {self.scale_text}: {self.figure_label} **{self.figure.text()}**; "
                f"ceiling ({self.ceiling_label}) {self.ceiling.text()}; ratio "
                f"{'n/a' if ratio is None else f'{ratio:.2f}×'}; anchor: {self.anchor}"
                + (f"; {extra}" if extra else "") + (f"; {' '.join(self.notes)}" if self.notes else "")
                + f". `{command}`")


def report(result: Result, command: str, write_doc: bool = True) -> None:
    print("\n".join(result.lines()), flush=True)
    if write_doc and not IN_CHECKOUT:
        print("(not run from a kactor checkout: no docs/performance.md to append the result to)", flush=True)
    elif write_doc:
        append_doc_line(result.doc_line(command))


def append_doc_line(line: str) -> None:
    """Append under the "Benchmarks" section of docs/performance.md (created if absent; other sections untouched)."""
    os.makedirs(os.path.dirname(PERF_DOC), exist_ok=True)
    text = "# kactor performance\n"
    if os.path.exists(PERF_DOC):
        with open(PERF_DOC, encoding="utf-8") as f:
            text = f.read()
    if SECTION not in text:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\nResults of `kactor bench NAME` (newest last).\n\n"
        with open(PERF_DOC, "w", encoding="utf-8") as f:
            f.write(text)
    start = text.index(SECTION)
    nxt = text.find("\n## ", start + len(SECTION))
    if nxt == -1:
        with open(PERF_DOC, "a", encoding="utf-8") as f:
            f.write(("" if text.endswith("\n") else "\n") + line + "\n")
    else:  # another section follows ours: insert at the end of ours
        body = text[:nxt].rstrip("\n") + "\n" + line + "\n" + text[nxt:]
        with open(PERF_DOC, "w", encoding="utf-8") as f:
            f.write(body)


# -- a recorded cluster story -------------------------------------------------------------------------------------
def scenario_trace(trace_dir: str | None, partitions: int, prefix: str) -> tuple[str, bool]:
    """``trace_dir`` if given, else a new temp folder holding the traces of `kactor.demo`'s story on a
    3-broker cluster with a ``partitions``-partition topic. Returns (folder, recorded here?)."""
    if trace_dir is not None:
        return trace_dir, False
    import tempfile

    from kactor.demo import record_scenario

    trace_dir = tempfile.mkdtemp(prefix=prefix)
    print(f"recording: 3 brokers, scenario with a {partitions}-partition topic → {trace_dir}", flush=True)
    t0 = time.monotonic()
    result = record_scenario(trace_dir, partitions=partitions, say=lambda s: print("  " + s, flush=True))
    print(f"recorded in {time.monotonic() - t0:.1f}s" + (f"; failed steps: {result.failures}"
                                                          if result.failures else ""), flush=True)
    return trace_dir, True


# -- pipelined kazoo -------------------------------------------------------------------------------------------------
def pipelined(calls: Iterable[Callable[[], Any]], window: int = 1000) -> tuple[float, list[Any]]:
    """Issue kazoo async calls with at most ``window`` in flight; return (seconds, results or exceptions)."""
    sem = threading.Semaphore(window)
    results: list[Any] = []
    lock = threading.Lock()
    done = threading.Event()
    state = {"issued": 0, "finished": 0, "closed": False}

    def on_done(ar: Any) -> None:
        try:
            value = ar.get_nowait()
        except Exception as e:  # noqa: BLE001 - reported to the caller as a value
            value = e
        with lock:
            results.append(value)
            state["finished"] += 1
            if state["closed"] and state["finished"] == state["issued"]:
                done.set()
        sem.release()

    t0 = time.perf_counter()
    for call in calls:
        sem.acquire()
        with lock:
            state["issued"] += 1
        call().rawlink(on_done)
    with lock:
        state["closed"] = True
        if state["finished"] == state["issued"]:
            done.set()
    done.wait()
    return time.perf_counter() - t0, results


def errors(results: Sequence[Any]) -> list[BaseException]:
    return [r for r in results if isinstance(r, BaseException)]


def connect(hosts: str, timeout: float = 30.0) -> KazooClient:
    c = KazooClient(hosts=hosts, timeout=timeout)
    c.start(timeout=30)
    return c


def close(c: KazooClient) -> None:
    try:
        c.stop()
        c.close()
    except Exception:  # noqa: BLE001
        pass


# -- Kafka's znodes, written as the admin tool and a controller would -----------------------------------------------
def topic_json(topic: str, partitions: dict[int, list[int]]) -> bytes:
    """TopicZNode.encode of a topic without reassignments."""
    return znodes.encode_topic_assignment(
        {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in partitions.items()}).encode()


def state_json(leader: int, isr: list[int], controller_epoch: int = 1, leader_epoch: int = 0) -> bytes:
    """TopicPartitionStateZNode.encode."""
    return znodes.encode_partition_state(LeaderIsrAndControllerEpoch(
        LeaderAndIsr(leader, leader_epoch, tuple(isr), 0), controller_epoch)).encode()


def state_path(topic: str, partition: int) -> str:
    return paths.TopicPartitionStateZNode.path(TopicPartition(topic, partition))


def assignment(topics: int, partitions: int, rf: int, brokers: int,
               prefix: str = "t") -> dict[str, dict[int, list[int]]]:
    """Round-robin replica assignment (AdminUtils.assignReplicasToBrokers without the random start, so every run and
    every scale has the same layout: partition p of topic t starts at broker (t*partitions + p) % brokers)."""
    width = len(str(max(topics - 1, 1)))
    out: dict[str, dict[int, list[int]]] = {}
    for t in range(topics):
        parts = {}
        for p in range(partitions):
            first = (t * partitions + p) % brokers
            parts[p] = [(first + i) % brokers for i in range(rf)]
        out[f"{prefix}{t:0{width}d}"] = parts
    return out


def populate(zk: KazooClient, layout: dict[str, dict[int, list[int]]], with_state: bool,
             controller_epoch: int = 1, ops_per_multi: int = 200) -> float:
    """Write /brokers/topics/<t> (JSON v2) and, with ``with_state``, /partitions/<p>/state (leader = first replica,
    ISR = all replicas) directly, in multi() batches pipelined with kazoo async. Returns seconds."""
    zk.ensure_path(paths.TopicsZNode)
    t0 = time.perf_counter()
    batches: list[list[tuple[str, bytes]]] = [[]]
    for topic, parts in layout.items():
        nodes = [(paths.TopicZNode.path(topic), topic_json(topic, parts))]
        if with_state:
            nodes.append((paths.TopicPartitionsZNode.path(topic), b""))
            for p, replicas in sorted(parts.items()):
                nodes.append((paths.TopicPartitionZNode.path(TopicPartition(topic, p)), b""))
                nodes.append((state_path(topic, p), state_json(replicas[0], list(replicas), controller_epoch)))
        if len(batches[-1]) + len(nodes) > ops_per_multi and batches[-1]:
            batches.append([])
        batches[-1].extend(nodes)

    def commit(batch: list[tuple[str, bytes]]) -> Callable[[], Any]:
        def go() -> Any:
            t = zk.transaction()
            for path, data in batch:
                t.create(path, data)
            return t.commit_async()
        return go

    _, results = pipelined((commit(b) for b in batches if b), window=64)
    bad = errors(results) + [r for res in results if isinstance(res, list) for r in res if isinstance(r, BaseException)]
    if bad:
        raise RuntimeError(f"populating ZooKeeper failed: {bad[0]!r} ({len(bad)} errors)")
    return time.perf_counter() - t0


def hold_controller(zk: KazooClient) -> None:
    """Occupy /controller with an ephemeral of this session (broker 999), so no broker becomes controller before all
    have registered; release_controller() then starts one clean election among the live brokers."""
    zk.create(paths.ControllerZNode, FAKE_CONTROLLER, ephemeral=True)


def release_controller(zk: KazooClient) -> None:
    zk.delete(paths.ControllerZNode)


def controller_id(zk: KazooClient) -> int | None:
    try:
        data, _ = zk.get(paths.ControllerZNode)
    except Exception:  # noqa: BLE001 - NoNode
        return None
    bid = znodes.decode_controller(data.decode())
    return None if bid == FAKE_CONTROLLER_ID else bid


def wait_for(pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            v = pred()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 - polling through transient states
            last = e
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}" + (f" ({last!r})" if last else ""))


def read_states(zk: KazooClient, layout: dict[str, dict[int, list[int]]], window: int = 2000
                ) -> dict[tuple[str, int], tuple[LeaderAndIsr | None, int]]:
    """Every partition's state znode, pipelined: (topic, p) → (leader, epoch and ISR, or None; zkVersion)."""
    keys = [(t, p) for t, parts in layout.items() for p in parts]
    out: dict[tuple[str, int], tuple[LeaderAndIsr | None, int]] = {}
    lock = threading.Lock()

    def call(k: tuple[str, int]) -> Callable[[], Any]:
        def go() -> Any:
            ar = zk.get_async(state_path(*k))

            def store(a: Any) -> None:
                try:
                    data, stat = a.get_nowait()
                    info = znodes.decode_partition_state(data.decode(), stat.version)
                    v = (info.leader_and_isr if info is not None else None, stat.version)
                except Exception:  # noqa: BLE001
                    v = (None, -1)
                with lock:
                    out[k] = v
            ar.rawlink(store)
            return ar
        return go

    pipelined((call(k) for k in keys), window=window)
    return out


# -- ceilings --------------------------------------------------------------------------------------------------------
def ceiling_failover_reads(zk: KazooClient, layout: dict[str, dict[int, list[int]]], window: int = 2000) -> float:
    """What KafkaController.initializeControllerContext reads, pipelined: /brokers/topics' children, every topic
    znode, every partition state znode."""
    t0 = time.perf_counter()
    zk.get_children(paths.TopicsZNode)
    _, r1 = pipelined((lambda t=t: zk.get_async(paths.TopicZNode.path(t))) for t in layout)
    _, r2 = pipelined(((lambda t=t, p=p: zk.get_async(state_path(t, p)))
                       for t, parts in layout.items() for p in parts), window=window)
    if errors(r1) or errors(r2):
        raise RuntimeError(f"ceiling reads failed: {(errors(r1) + errors(r2))[0]!r}")
    return time.perf_counter() - t0


def ceiling_conditional_writes(zk: KazooClient, payloads: Sequence[bytes], fenced: bool = True,
                               window: int = 2000) -> float:
    """Conditional writes (setData at the expected version) of ``len(payloads)`` state-sized znodes, pipelined —
    on scratch znodes, so the cluster's own znode versions stay untouched. With ``fenced``, each write is a
    multi {check /controller_epoch version, setData}, as every controller write is (KAFKA-6082). Returns the
    seconds of the writes alone (creating and removing the scratch znodes is not timed)."""
    base = f"/kactor-bench-ceiling-{os.getpid()}"
    zk.ensure_path(base)
    epoch_stat = zk.exists(paths.ControllerEpochZNode)
    scratch = [f"{base}/{i}" for i in range(len(payloads))]
    _, r = pipelined((lambda p=p, d=d: zk.create_async(p, d)) for p, d in zip(scratch, payloads, strict=True))
    if errors(r):
        raise RuntimeError(f"ceiling setup failed: {errors(r)[0]!r}")

    def write(p: str, d: bytes) -> Callable[[], Any]:
        def go() -> Any:
            if fenced and epoch_stat is not None:
                t = zk.transaction()
                t.check(paths.ControllerEpochZNode, epoch_stat.version)
                t.set_data(p, d, 0)
                return t.commit_async()
            return zk.set_async(p, d, 0)
        return go

    secs, r = pipelined((write(p, d) for p, d in zip(scratch, payloads, strict=True)), window=window)
    bad = errors(r) + [x for res in r if isinstance(res, list) for x in res if isinstance(x, BaseException)]
    pipelined((lambda p=p: zk.delete_async(p)) for p in scratch)
    zk.delete(base)
    if bad:
        raise RuntimeError(f"ceiling writes failed: {bad[0]!r}")
    return secs


# -- traces ----------------------------------------------------------------------------------------------------------
def scan(path: str, types: Iterable[str], since_ms: float = 0.0) -> Iterator[dict[str, Any]]:
    """The records of one trace file whose type is in ``types`` and ts >= since_ms (cheap text filter first, since
    traces at scale are hundreds of MB). A cut last line is skipped."""
    needles = tuple(f'"type":"{t}"' for t in types)
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError:
        return
    with f:
        f.readline()
        for line in f:
            if not any(n in line for n in needles):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec["ts"] >= since_ms:
                yield rec


def first_input_after(path: str, after_seq: int) -> float | None:
    """The ts of the first external input delivered after record ``after_seq``: the driver delivers one input at a
    time, so this bounds from above when the cascade that wrote ``after_seq`` ended."""
    with open(path, encoding="utf-8") as f:
        f.readline()
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec["seq"] > after_seq and is_external(rec["sender"]):
                return float(rec["ts"])
    return None


def trace_files(trace_dir: str, broker_id: int) -> list[str]:
    from kactor.trace.reader import trace_file_name
    out = []
    for k in range(100):
        p = os.path.join(trace_dir, trace_file_name(broker_id, k))
        if not os.path.exists(p):
            break
        out.append(p)
    return out


def now_ms() -> float:
    return time.time() * 1000.0


def scale_count(base: int, scale: float, minimum: int = 1) -> int:
    return max(minimum, int(round(base * scale)))


# -- a cluster set up for a benchmark --------------------------------------------------------------------------------
def cpu_seconds(pids: Iterable[int]) -> float:
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def wait_quiet(pids: Callable[[], Iterable[int]], timeout: float, window_s: float = 1.0,
               max_busy: float | None = None, windows: int = 3) -> float:
    """Wait until the given processes together use under ``max_busy`` of one core over ``windows`` consecutive
    windows of ``window_s`` (the cluster has finished reacting). Only these processes' CPU time is counted, but
    other users' load can still starve them: one quiet second was once taken right after a controller was
    elected, while it waited for its 25,000 znode reads (a controlled-shutdown run then measured the failover,
    60 s in 2 attempts), hence several windows in a row."""
    return quiet_windows(pids, timeout, window_s, max_busy, windows)[0]


def quiet_windows(pids: Callable[[], Iterable[int]], timeout: float, window_s: float = 1.0,
                  max_busy: float | None = None, windows: int = 3) -> tuple[float, float]:
    """`wait_quiet`, also returning what the processes used over the quiet windows, in cores: (seconds, cores)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    quiet: list[float] = []
    while time.monotonic() < deadline:
        ps = list(pids())
        # idle brokers still run their timers (fetch loops, checkpoints): allow a few % of a core each
        limit = max_busy if max_busy is not None else 0.05 + 0.04 * len(ps)
        before = cpu_seconds(ps)
        time.sleep(window_s)
        used = cpu_seconds(ps) - before
        quiet = [*quiet, used / window_s] if used < limit * window_s else []
        if len(quiet) >= windows:
            return time.monotonic() - t0, sum(quiet) / len(quiet)
    raise TimeoutError(f"cluster still busy after {timeout:.0f}s")


QUIET_CAP = 0.9  # cores: a quiet cluster never keeps a core busy
# a settled cluster: so many consecutive windows of so many seconds quiet (or steady). The smoke tests
# (tests/test_bench_smoke.py), which never quote a figure, settle on shorter ones.
SETTLE_WINDOWS = 3
QUIET_WINDOW_S = 1.0
STEADY_WINDOW_S = 2.0
STEADY_CAP = 0.8  # of the machine's cores: a steady cluster above it leaves the benchmark nothing to measure with


def cores_used(pids: Callable[[], Iterable[int]], window_s: float) -> float:
    """The CPU the processes use together over ``window_s``, in cores."""
    ps = list(pids())
    before = cpu_seconds(ps)
    time.sleep(window_s)
    return (cpu_seconds(ps) - before) / window_s


def wait_steady(pids: Callable[[], Iterable[int]], timeout: float, max_busy: float, window_s: float = 2.0,
                windows: int = 3, tolerance: float = 0.10) -> float:
    """Wait until the processes use under ``max_busy`` cores in ``windows`` consecutive windows of ``window_s``
    that differ from their mean by at most ``tolerance`` of it: no reaction is under way any more, only the idle
    cluster's own periodic work (a cluster creating partitions or electing leaders falls or rises window to
    window)."""
    return steady_windows(pids, timeout, max_busy, window_s, windows, tolerance)[0]


def steady_windows(pids: Callable[[], Iterable[int]], timeout: float, max_busy: float, window_s: float = 2.0,
                   windows: int = 3, tolerance: float = 0.10) -> tuple[float, float]:
    """`wait_steady`, also returning the steady windows' mean, in cores: (seconds, cores)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    recent: list[float] = []
    while time.monotonic() < deadline:
        used = cores_used(pids, window_s)
        recent = [*recent, used][-windows:] if used < max_busy else []
        if len(recent) == windows:
            mean = sum(recent) / windows
            if all(abs(u - mean) <= tolerance * mean for u in recent):
                return time.monotonic() - t0, mean
    raise TimeoutError(f"cluster not steady under {max_busy:.2f} cores after {timeout:.0f}s")


def unwind_on_sigterm() -> None:
    """SIGTERM (a timeout, a kill) unwinds like Ctrl-C, so the callers' ``finally`` and ``__exit__`` stop the
    brokers and ZooKeeper. Only the main thread may set a handler: a cluster started in another one relies on
    `start_together`'s caller having set it."""
    import signal

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def start_together(*clusters: Any) -> None:
    """``start()`` the clusters at once, each in a thread: most of a start is waiting (for a JVM, for the brokers
    to register, for the controller's LeaderAndIsr), so two started together take little longer than one. The
    first failure is raised once all have ended."""
    unwind_on_sigterm()
    failed: list[BaseException] = []

    def start(c: Any) -> None:
        try:
            c.start()
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread below
            failed.append(e)

    threads = [threading.Thread(target=start, args=(c,), name=f"start-{i}") for i, c in enumerate(clusters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]


class BenchCluster:
    """A real ZooKeeper (disk or tmpfs data dir), Kafka's znodes pre-written, then N broker processes that elect
    their first controller only once all have registered (see hold_controller)."""

    def __init__(self, brokers: int, layout: dict[str, dict[int, list[int]]], with_state: bool = True,
                 overrides: Sequence[str] = (), tmpfs: bool = False, trace: bool = True,
                 session_timeout_ms: int = 6000, keep: bool = False) -> None:
        import tempfile
        self.n = brokers
        self.layout = layout
        self.with_state = with_state
        self.tmpfs = tmpfs
        self.base = tempfile.mkdtemp(prefix="kactor-bench-", dir="/dev/shm" if tmpfs else None)
        self.trace_dir = os.path.join(self.base, "traces") if trace else None
        self.overrides = [f"zookeeper.session.timeout.ms={session_timeout_ms}", *overrides]
        self.keep = keep
        self.server: Any = None
        self.lc: Any = None
        self.zk: KazooClient | None = None
        self.populate_s = 0.0
        self.startup_s = 0.0
        self.idle_cores = 0.0  # the cluster's CPU when it last counted as settled (`settle`)

    def start(self) -> BenchCluster:
        from kactor.cluster import LocalCluster
        unwind_on_sigterm()
        from zk_bridge.server import EmbeddedZooKeeper
        self.server = EmbeddedZooKeeper(data_dir=os.path.join(self.base, "zk-data"), tick_ms=2000)
        self.server.start()
        self.zk = connect(self.server.connect_string)
        hold_controller(self.zk)
        self.populate_s = populate(self.zk, self.layout, self.with_state)
        self.lc = LocalCluster(self.n, zookeeper=self.server.connect_string, base_dir=os.path.join(self.base, "c"),
                               trace_dir=self.trace_dir, overrides=self.overrides, log_level="WARNING")
        t0 = time.monotonic()
        self.lc.start()
        wait_for(lambda: len(self.zk.get_children(paths.BrokerIdsZNode)) == self.n, 120,
                 f"{self.n} brokers registered")
        release_controller(self.zk)
        wait_for(lambda: controller_id(self.zk) is not None, 120, "a controller")
        self.settle()
        self.startup_s = time.monotonic() - t0
        return self

    def pids(self) -> list[int]:
        return self.lc.pids() + ([self.server.pid] if self.server and self.server.pid else [])

    def settle(self, timeout: float = 900.0) -> float:
        """Wait until the cluster has finished reacting: quiet (under `idle_busy`), or, where its idle brokers' own
        fetch rounds need more than a quiet cluster may use (`expected_idle` above `QUIET_CAP`: 5 brokers with
        50,000 replicas need ~1.3 cores), steady at that level (`wait_steady`): there is no quieter state to wait
        for. The cluster's CPU over those settled windows, in cores, is kept in ``idle_cores`` for the benchmark to
        quote beside its figure."""
        expected = self.expected_idle()
        if expected <= QUIET_CAP:
            took, self.idle_cores = quiet_windows(self.pids, timeout, QUIET_WINDOW_S, expected, SETTLE_WINDOWS)
        else:
            took, self.idle_cores = steady_windows(self.pids, timeout,
                                                   min(expected, STEADY_CAP * (os.cpu_count() or 1)),
                                                   STEADY_WINDOW_S, SETTLE_WINDOWS)
        return took

    def expected_idle(self) -> float:
        """The CPU (in cores) the idle cluster is expected to use: an idle broker still fetches and checks its ISRs,
        O(replicas) per round — about 17 % of a core per 10,000 replicas on this machine type (see
        docs/performance-log.md, broker side) — and its replica fetchers round-trip: every partition shard of a
        follower parks a fetch at each leader for replica.fetch.wait.max.ms, ~64 traced fetch round trips a second
        per broker with 8 shards and 2 leaders, ~11 % of a core a broker here (2026-11-26); a margin on top."""
        replicas = sum(len(r) for parts in self.layout.values() for r in parts.values())
        return 0.05 + 0.04 * (self.n + 1) + 2.5e-5 * replicas + 0.06 * self.n

    def idle_busy(self) -> float:
        """The CPU (in cores) the cluster may use and still count as quiet: `expected_idle`, never a busy core."""
        return min(QUIET_CAP, self.expected_idle())

    def controller(self) -> int | None:
        return controller_id(self.zk)

    def live(self) -> list[int]:
        return sorted(int(b) for b in self.zk.get_children(paths.BrokerIdsZNode))

    def restart(self, broker_id: int) -> None:
        self.lc.start_broker(broker_id)
        wait_for(lambda: broker_id in self.live(), 120, f"broker {broker_id} registered")

    def trace_file(self, broker_id: int) -> str:
        return trace_files(self.trace_dir, broker_id)[-1]

    def stop(self) -> None:
        """Stop the brokers and ZooKeeper; the folder is removed unless ``keep``. A folder about to be removed needs
        no orderly stop, so its brokers are SIGKILLed: rolled one at a time, the last brokers' controlled shutdowns
        cannot move the leaderships nobody else can take and retry (controlled.shutdown.retry.backoff.ms, 5 s) — 10 s
        for 3 brokers, 30 s for 5, after every measurement was taken. A kept folder gets the orderly stop, its traces
        and logs complete."""
        import shutil
        if self.zk is not None:
            close(self.zk)
            self.zk = None
        if self.lc is not None:
            if not self.keep:
                for b, proc in list(self.lc.procs.items()):
                    if proc.poll() is None:
                        self.lc.kill_broker(b)
            self.lc.stop()
        if self.server is not None:
            self.server.stop()
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> BenchCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
