"""kactor's own Kafka-protocol tools against a real cluster, as a user runs them: ``kactor produce
--bootstrap-server`` and ``kactor consume`` (exact records and offsets), ``kactor consumer-groups`` after a group
consumed, and ``kactor describe --watch --produce`` showing a live producer's acknowledgements while its leader is
SIGKILLed. The first two run on the session's shared cluster (conftest shared_cluster), with topics and a group of
their own; the SIGKILL test has a cluster of its own."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import OVERRIDES, bootstrap

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ASSIGNMENT = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}


def test_produce_and_consume_exact_records(shared_cluster: Cluster) -> None:
    """--count records go round-robin (record i to partition i % 3 at offset i // 3), each partition's
    acknowledgement line says so, and the console consumer prints every one of them from the beginning."""
    c = shared_cluster
    c.create_topic("tools", assignment=ASSIGNMENT)
    servers = bootstrap(c)
    out = run_kactor("produce", "--bootstrap-server", servers, "--topic", "tools", "--count", "30", "--acks", "all")
    assert out.stdout.splitlines() == [f"tools-{p}: 10 records acknowledged at offsets 0..9 (acks=all)"
                                       for p in range(3)]
    keyed = subprocess.run([sys.executable, "-m", "kactor", "produce", "--bootstrap-server", servers, "--topic",
                            "tools", "--partition", "1", "--property", "parse.key=true", "--print-offsets"],
                           input="alpha\tone\nbeta\ttwo\n", capture_output=True, text=True, timeout=120)
    assert keyed.returncode == 0, keyed.stderr
    assert keyed.stdout.splitlines() == ["tools-1@10", "tools-1@11",
                                         "tools-1: 2 records acknowledged at offsets 10..11 (acks=1)"]

    got = run_kactor("consume", "--bootstrap-server", servers, "--topic", "tools", "--from-beginning",
                     "--max-messages", "32", "--timeout-ms", "30000", "--property", "print.partition=true",
                     "--property", "print.offset=true", "--property", "print.key=true")
    want = [f"Partition:{i % 3}\tOffset:{i // 3}\tnull\trecord-{i}" for i in range(30)]
    want += ["Partition:1\tOffset:10\talpha\tone", "Partition:1\tOffset:11\tbeta\ttwo"]
    assert sorted(got.stdout.splitlines()) == sorted(want)
    for p in range(3):  # each partition in offset order
        offsets = [int(line.split("\t")[1][len("Offset:"):]) for line in got.stdout.splitlines()
                   if line.startswith(f"Partition:{p}\t")]
        assert offsets == sorted(offsets)
    assert got.stderr.strip().endswith("Processed a total of 32 messages")

    one = run_kactor("consume", "--bootstrap-server", servers, "--topic", "tools", "--partition", "2", "--offset",
                     "8", "--timeout-ms", "3000")
    assert one.stdout.splitlines() == ["record-26", "record-29"]
    missing = run_kactor("consume", "--bootstrap-server", servers, "--topic", "nope", check=False)
    assert (missing.returncode, missing.stderr.strip()) == (1, "kactor consume: Topic nope does not exist")


def test_consumer_groups_describe_after_a_group_consumed(shared_cluster: Cluster) -> None:
    """A console consumer in group 'reporting' reads 12 of the topic's 30 records and commits; consumer-groups
    --describe then shows its committed offsets, the log end offsets and the lag per partition, with no member."""
    c = shared_cluster
    c.create_topic("grouped", assignment=ASSIGNMENT)
    servers = bootstrap(c)
    run_kactor("produce", "--bootstrap-server", servers, "--topic", "grouped", "--count", "30", "--acks", "all")
    got = run_kactor("consume", "--bootstrap-server", servers, "--topic", "grouped", "--group", "reporting",
                     "--from-beginning", "--max-messages", "30", "--timeout-ms", "60000")
    assert len(got.stdout.splitlines()) == 30
    listed = run_kactor("consumer-groups", "--bootstrap-server", servers, "--list")
    assert "reporting" in listed.stdout.split()
    desc = run_kactor("consumer-groups", "--bootstrap-server", servers, "--describe", "--group", "reporting")
    assert "Consumer group 'reporting' has no active members." in desc.stderr
    rows = [line.split() for line in desc.stdout.splitlines() if line.startswith("reporting")]
    assert sorted(rows) == [["reporting", "grouped", str(p), "10", "10", "0", "-", "-", "-"] for p in range(3)]
    header = next(line for line in desc.stdout.splitlines() if line.startswith("GROUP"))
    assert header.split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                              "CONSUMER-ID", "HOST", "CLIENT-ID"]
    run_kactor("produce", "--bootstrap-server", servers, "--topic", "grouped", "--count", "6")
    lagging = run_kactor("consumer-groups", "--bootstrap-server", servers, "--describe", "--group", "reporting")
    rows = [line.split() for line in lagging.stdout.splitlines() if line.startswith("reporting")]
    assert sorted(rows) == [["reporting", "grouped", str(p), "10", "12", "2", "-", "-", "-"] for p in range(3)]
    nobody = run_kactor("consumer-groups", "--bootstrap-server", servers, "--describe", "--group", "nobody",
                        check=False)
    assert nobody.returncode == 1 and "Error: Consumer group 'nobody' does not exist." in nobody.stderr


class _Lines:
    """A subprocess's stdout or stderr collected line by line on a thread, for polling."""

    def __init__(self, stream: IO[str] | None) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def frames(self) -> list[list[str]]:
        """The frames printed so far (each starts at the time rule of _watch_log)."""
        out: list[list[str]] = []
        for line in list(self.lines):
            if line.startswith("───") or line.startswith("---"):
                out.append([])
            elif out:
                out[-1].append(line)
        return out


def _row(frame: list[str], topic: str, partition: int) -> list[str] | None:
    for line in frame:
        cells = [c.strip() for c in line.strip().strip("│").split("│")]  # empty last cells kept
        if len(cells) > 2 and cells[0] == topic and cells[1] == str(partition):
            return cells
    return None


def _producer_line(frame: list[str]) -> str | None:
    return next((line.strip("│ ") for line in frame if "Producer →" in line), None)


def _wait_frames(proc: subprocess.Popen[str], out: _Lines, err: _Lines, find: Callable[[], Any], timeout: float,
                 what: str) -> Any:
    """Poll ``find()`` over the frames printed so far until it returns something; fail at once if the command
    exited (with its stderr), or after ``timeout`` with the last frame and the stderr seen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found is not None:
            return found
        if proc.poll() is not None:
            pytest.fail(f"kactor describe --watch exited {proc.returncode} while waiting for {what}:\n"
                        + "\n".join(err.lines[-40:]))
        time.sleep(0.1)
    frames = out.frames()
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}; {len(frames)} frames, the last:\n"
                + "\n".join(frames[-1] if frames else out.lines[-40:]) + "\nstderr:\n" + "\n".join(err.lines[-40:]))


def test_describe_watch_shows_a_live_producers_acks_through_a_leader_move(start_cluster) -> None:
    """describe --watch --produce: the partition's row carries the producer's acknowledgements; after the
    leader's SIGKILL a frame shows the new leader and acknowledgements past those acknowledged before."""
    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    c.create_topic("watched", assignment={0: [0, 1, 2]}, configs={"min.insync.replicas": "2"})
    c.wait_partition("watched", 0, lambda s: len(s["isr"]) == 3, what="full ISR")
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "describe", "--zookeeper", c.connect_string, "--watch",
                             "--interval", "0.5", "--bootstrap-server", bootstrap(c), "--produce", "watched",
                             "--rate", "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = _Lines(proc.stdout), _Lines(proc.stderr)
    try:
        def acked_at_the_leader() -> tuple[int, int, int] | None:
            """(leader, leader epoch, last acknowledged offset) of the latest frame with acks, once it shows the
            leader ZooKeeper has now: under load a broker's session can expire and move the leader before the
            kill, so the test kills the leader it sees rather than assuming broker 0."""
            state = c.partition_state("watched", 0)
            for frame in reversed(out.frames()):
                row = _row(frame, "watched", 0)
                if row is not None and row[8] not in ("", "-"):
                    if state is not None and (row[2], row[3]) == (str(state["leader"]), str(state["leader_epoch"])):
                        return int(row[2]), int(row[3]), int(row[8])
                    return None
            return None
        leader, epoch, before = _wait_frames(proc, out, err, acked_at_the_leader, 60,
                                             "a frame with acks from the partition's current leader")
        c.kill(leader)

        def after_move() -> list[str] | None:
            for frame in reversed(out.frames()):
                row = _row(frame, "watched", 0)
                if row is not None and row[2] not in (str(leader), "none") and row[3].isdigit() \
                        and int(row[3]) > epoch and row[8] not in ("", "-") and int(row[8]) > before:
                    return frame
            return None
        frame = _wait_frames(proc, out, err, after_move, 60,
                             f"a frame with a new leader (epoch > {epoch}) and acks past {before}, the last before "
                             f"broker {leader}'s SIGKILL")
        line = _producer_line(frame)
        assert line is not None and line.startswith("Producer → watched (acks=all, 50/s):")
        assert " 0 failed" in line
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "\n".join(err.lines)
