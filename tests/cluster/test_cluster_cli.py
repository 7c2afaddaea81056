"""Issue #3: the two commands a user runs, as subprocesses — ``kactor cluster`` (start, Ctrl-C, nothing left behind,
one trace per broker) and ``kactor broker``'s start-up failures (one clear line on stderr, non-zero exit)."""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kactor.trace.reader import read_records
from kactor.trace.replay import check_trace_file

pytestmark = pytest.mark.cluster

KACTOR = [sys.executable, "-m", "kactor"]


# -- /proc scanning (no psutil) -------------------------------------------------------------------------------------
def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a live process, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return fields[0], int(fields[1])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", errors="replace")
    except OSError:
        return ""


def _all_pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def children_of(pid: int) -> list[int]:
    return [p for p in _all_pids() if (st := _proc_stat(p)) is not None and st[1] == pid]


def alive(pid: int) -> bool:
    st = _proc_stat(pid)
    return st is not None and st[0] != "Z"


def pids_mentioning(text: str) -> list[int]:
    me = os.getpid()
    return [p for p in _all_pids() if p != me and text in _cmdline(p) and alive(p)]


def foreground_job() -> None:
    """preexec_fn for a ``kactor`` a test sends Ctrl-C to: SIGINT at its default, as a shell starts a foreground
    job. A test run started in the background (``scripts/test &`` from a script, nohup) has SIGINT ignored, which its
    children inherit, and kactor then leaves Ctrl-C ignored, as a background job should (the JVM does the same)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Lines:
    """Reads a pipe line by line in a thread, so the test can wait for a line with a deadline."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no line matching {pattern!r} within {timeout:.0f}s; got {self.seen}")


# -- kactor cluster -------------------------------------------------------------------------------------------------
def test_cluster_command_starts_three_brokers_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    data, traces = tmp_path / "data", tmp_path / "traces"
    stderr_path = tmp_path / "cluster.stderr"
    t0 = time.monotonic()
    with open(stderr_path, "wb") as err:
        # its own process group, so Ctrl-C can be simulated the way a terminal sends it: SIGINT to the whole group
        # (the short backoff: at Ctrl-C the last broker leads partitions nobody else can take and retries its
        # controlled shutdown 3 times, 5 s apart by default, as Kafka's last broker does)
        proc = subprocess.Popen([*KACTOR, "cluster", "--brokers", "3", "--data-dir", str(data),
                                 "--trace-dir", str(traces), "--override", "controlled.shutdown.retry.backoff.ms=200"],
                                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True,
                                start_new_session=True, preexec_fn=foreground_job)
    try:
        out = _Lines(proc.stdout)
        connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 60).group(1)
        zk = KazooClient(hosts=connect, timeout=5.0)
        zk.start(timeout=15)
        try:
            # brokers 0, 1, 2 within 10 s of the launch (about 2 s on an idle machine); the command prints the line
            # only once they registered, so a slow, busy machine does not fail here — the poll just ends sooner
            deadline = t0 + 10
            while sorted(zk.get_children("/brokers/ids")) != ["0", "1", "2"] and time.monotonic() < deadline:
                time.sleep(0.1)
            assert sorted(zk.get_children("/brokers/ids")) == ["0", "1", "2"]
            controller = int(re.search(rb'"brokerid":(\d+)', zk.get("/controller")[0]).group(1))
            assert controller in (0, 1, 2)
            assert zk.get("/controller_epoch")[0] == b"1"
            # the line a Kafka client needs: every broker's registered endpoint, in broker id order
            bootstrap = out.wait_for(r"^bootstrap\.servers=(\S+)$", 5).group(1)
            registered = [json.loads(zk.get(f"/brokers/ids/{b}")[0])["endpoints"][0].removeprefix("PLAINTEXT://")
                          for b in range(3)]
            assert bootstrap.split(",") == registered
            # a replicated topic, so Ctrl-C has leaderships to move (controlled shutdown for real)
            subprocess.run([*KACTOR, "topics", "--zookeeper", connect, "--create", "--topic", "t", "--partitions",
                            "3", "--replication-factor", "3"], check=True, capture_output=True, timeout=60)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(
                    zk.exists(f"/brokers/topics/t/partitions/{p}/state") for p in range(3)):
                time.sleep(0.1)
            assert all(zk.exists(f"/brokers/topics/t/partitions/{p}/state") for p in range(3))
        finally:
            zk.stop()
            zk.close()

        # everything it started: the brokers and the embedded ZooKeeper (java) are its children
        kids = children_of(proc.pid)
        brokers = [p for p in kids if str(data) in _cmdline(p)]
        javas = [p for p in kids if "java" in _cmdline(p)]
        assert len(brokers) == 3 and len(javas) == 1, [(_cmdline(p)) for p in kids]
        # the brokers run in sessions of their own: a terminal's Ctrl-C reaches kactor cluster alone, which stops
        # them one at a time
        assert [os.getsid(p) for p in brokers] == brokers and os.getsid(proc.pid) == proc.pid

        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        out.wait_for(r"stopping brokers, then ZooKeeper", 30)
        proc.send_signal(signal.SIGHUP)  # and the terminal closes in the middle of the shutdown: it still completes
        proc.send_signal(signal.SIGINT)  # as does a second Ctrl-C
        assert proc.wait(timeout=90) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for pid in [*brokers, *javas]:
        assert not alive(pid), f"{pid} still running: {_cmdline(pid)}"
    assert pids_mentioning(str(data)) == []
    assert "Traceback" not in stderr_path.read_text()
    # rolled as an operator rolls a cluster: SIGTERM to one broker, its controlled shutdown, its exit, then the
    # next, the controller last (it leads what nobody else can take: its attempts fail, 200 ms apart); none of
    # them got the Ctrl-C
    stops = {b: _stop_in_log((data / f"broker-{b}.log").read_text(errors="replace"), b) for b in range(3)}
    order = sorted(range(3), key=lambda b: (b == controller, b))
    assert sorted(stops, key=lambda b: stops[b][0]) == order, stops
    for before, after in itertools.pairwise(order):
        assert stops[before][1] <= stops[after][0], stops
    assert [stops[b][2] for b in order[:2]] == ["controlled shutdown succeeded"] * 2, stops

    # one JSON-lines trace per broker, every line a known message type
    files = sorted(p.name for p in traces.iterdir() if p.suffix == ".jsonl")
    assert files == ["broker-0.jsonl", "broker-1.jsonl", "broker-2.jsonl"]
    # beside them at most their bytes files (trace version 4: only where an input carried more than 1 KB)
    assert {p.name for p in traces.iterdir()} - set(files) <= {f.removesuffix(".jsonl") + ".bin" for f in files}
    for name in files:
        check_trace_file(str(traces / name))
        assert sum(1 for _ in read_records(str(traces / name))) > 0


@pytest.mark.slow
def test_cluster_started_with_sigint_ignored_leaves_ctrl_c_alone_and_stops_on_sigterm(tmp_path: Path) -> None:
    """A script's background job: started with SIGINT ignored, kactor cluster says so and how to stop it, a Ctrl-C
    to its process group stops nothing (nor any broker: they are not in that group), and SIGTERM then stops it all,
    with no broker reported dead on the way."""
    data = tmp_path / "data"
    proc = subprocess.Popen([*KACTOR, "cluster", "--brokers", "1", "--data-dir", str(data), "--override",
                             "controlled.shutdown.retry.backoff.ms=200"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        out = _Lines(proc.stdout)
        how = out.wait_for(r"^Ctrl-C to stop is off: this process was started with SIGINT ignored \(a background "
                           r"job\); kill -TERM (\d+) stops it$", 90)
        assert int(how.group(1)) == proc.pid
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C, were it in the foreground
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=90) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out.wait_for(r"^stopping brokers, then ZooKeeper\.\.\.$", 5)  # after any "broker 0 died" line
    assert [line for line in out.seen if "died" in line] == []
    _stop_in_log((data / "broker-0.log").read_text(errors="replace"), 0)  # its one stop signal: SIGTERM


def _stop_in_log(text: str, broker_id: int) -> tuple[str, str, str]:
    """(when its stop signal arrived, when it began to exit, why) from a broker's log; its one stop signal must be
    SIGTERM. The times are the log's wall-clock stamps ("2026-11-28 02:38:44,911"), which sort as text."""
    signals = re.findall(r"^(\S+ \S+) INFO .* Terminating process due to signal (\w+)$", text, re.M)
    assert [sig for _, sig in signals] == ["SIGTERM"], (broker_id, signals)
    stopping = re.search(rf"^(\S+ \S+) INFO .* broker {broker_id} stopping \((.*)\)$", text, re.M)
    assert stopping is not None, (broker_id, text[-2000:])
    return signals[0][0], stopping.group(1), stopping.group(2)


# -- kactor broker: start-up failures --------------------------------------------------------------------------------
def _broker(tmp_path: Path, *overrides: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    args = [*KACTOR, "broker", "--override", f"log.dirs={tmp_path / 'logs'}", "--override", "kactor.metrics.port=0"]
    for o in overrides:
        args += ["--override", o]
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _one_clear_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0, proc
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kactor broker: "), lines
    return lines[0]


def test_broker_with_a_bad_config_value_fails_in_one_line(tmp_path: Path) -> None:
    line = _one_clear_line(_broker(tmp_path, "broker.id=abc", "zookeeper.connect=127.0.0.1:2181"))
    assert "broker.id" in line and "abc" in line


def test_broker_on_a_port_in_use_fails_in_one_line(tmp_path: Path, zk_chroot: str) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        line = _one_clear_line(_broker(tmp_path, "broker.id=0", f"zookeeper.connect={zk_chroot}",
                                       f"listeners=PLAINTEXT://127.0.0.1:{port}"))
    assert str(port) in line and "in use" in line.lower()


def test_broker_with_unreachable_zookeeper_fails_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = _one_clear_line(_broker(tmp_path, "broker.id=0", f"zookeeper.connect=127.0.0.1:{port}",
                                   "zookeeper.connection.timeout.ms=1500"))
    assert f"127.0.0.1:{port}" in line and "ZooKeeper" in line


# -- issue #19 item 7: nothing kactor cluster starts outlives it -----------------------------------------------------
def _start_cluster_in(tmp: Path, *args: str) -> tuple[subprocess.Popen[str], _Lines, list[int], Path]:
    """``kactor cluster`` with TMPDIR=tmp (so every temporary directory it makes is under ``tmp``), run until it
    printed its data dir; returns it, its output, every process it started (brokers, ZooKeeper JVMs, the janitor)
    and its temporary data dir."""
    tmp.mkdir()
    proc = subprocess.Popen([*KACTOR, "cluster", *args, "--override", "controlled.shutdown.retry.backoff.ms=200"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True, env=dict(os.environ, TMPDIR=str(tmp)))
    out = _Lines(proc.stdout)
    try:
        data = Path(out.wait_for(r"^data: (\S+) \(removed on exit\)$", 90).group(1))
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc, out, children_of(proc.pid), data


def _wait_gone(pids: list[int], tmp: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (any(alive(p) for p in pids) or any(tmp.iterdir())):
        time.sleep(0.1)
    assert [p for p in pids if alive(p)] == [], [_cmdline(p) for p in pids if alive(p)]
    assert sorted(p.name for p in tmp.iterdir()) == []


@pytest.mark.slow
def test_cluster_sighup_with_an_ensemble_stops_everything_in_order(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    proc, out, started, data = _start_cluster_in(tmp, "--brokers", "2", "--zookeeper-ensemble", "3")
    try:
        connect = next((line for line in out.seen if line.startswith("zookeeper.connect=")), "")
        hosts = connect.removeprefix("zookeeper.connect=").split(",")
        assert len(hosts) == 3 and all(h.startswith("127.0.0.1:") for h in hosts), out.seen
        brokers = [p for p in started if " broker " in _cmdline(p)]
        javas = [p for p in started if "java" in _cmdline(p)]
        assert len(brokers) == 2 and len(javas) == 3, [_cmdline(p) for p in started]
        for b in brokers:  # every broker was given the whole ensemble
            assert f"zookeeper.connect={','.join(hosts)}" in _cmdline(b)
        assert str(data).startswith(str(tmp)) and data.is_dir()
        proc.send_signal(signal.SIGHUP)  # the terminal closed
        assert proc.wait(timeout=90) == 0  # an orderly stop, as on SIGTERM
        out.wait_for(r"stopping brokers, then ZooKeeper", 5)
        _wait_gone(started, tmp, 10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
def test_cluster_sigkilled_leaves_no_process_and_no_temporary_directory(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    proc, _, started, data = _start_cluster_in(tmp, "--brokers", "2")
    try:
        assert len([p for p in started if "java" in _cmdline(p)]) == 1
        assert len([p for p in started if " broker " in _cmdline(p)]) == 2
        assert any(tmp.iterdir()) and data.is_dir()
        proc.kill()  # no cleanup code of kactor cluster runs: PR_SET_PDEATHSIG and the janitor do it
        proc.wait()
        # brokers and ZooKeeper get SIGTERM at once; the janitor SIGKILLs what is left after 5 s, then removes dirs
        _wait_gone(started, tmp, 20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_cluster_bad_ensemble_arguments_fail_in_one_line() -> None:
    for args, message in ((("--zookeeper-ensemble", "0"), "--zookeeper-ensemble must be at least 1"),
                          (("--zookeeper", "127.0.0.1:2181", "--zookeeper-ensemble", "3"),
                           "--zookeeper and --zookeeper-ensemble exclude each other")):
        proc = subprocess.run([*KACTOR, "cluster", *args], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.strip().startswith(f"kactor cluster: {message}"), proc.stderr
        assert proc.stderr.strip().count("\n") == 0, proc.stderr
