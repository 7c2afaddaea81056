"""sim/disk.py's SimDisk: fsync semantics, what a power loss keeps, a failing dir; and the logs on it (Log recovery
truncating a torn tail)."""

from __future__ import annotations

import errno
import os
import random

import pytest

from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log import Log
from core.broker.log_manager import LogManager
from messages.common import TopicPartition
from protocol.records import Record, build_batch, iter_batches, read_records
from sim.disk import SimDisk

D = "/logs"
TP = TopicPartition("t", 0)


def disk(seed: int = 0) -> SimDisk:
    d = SimDisk(random.Random(seed))
    d.makedirs(D)
    return d


def write(d: SimDisk, path: str, data: bytes, sync: bool = False) -> None:
    fd = d.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    d.write(fd, data)
    if sync:
        d.fsync(fd)
    d.close(fd)


def test_fsynced_bytes_survive_power_loss_and_the_rest_is_torn_at_any_byte():
    """Over seeds: the fsynced prefix is always there; what follows is some prefix of the unsynced bytes (every
    length from none to all occurs), possibly followed by zeros, never anything else."""
    synced, later = b"S" * 10, bytes(range(1, 21))
    lengths = set()
    zero_tails = 0
    for seed in range(400):
        d = disk(seed)
        write(d, f"{D}/f", synced, sync=True)
        write(d, f"{D}/f", later)
        d.power_loss()
        got = d.read_file(f"{D}/f")
        assert got.startswith(synced)
        rest = got[len(synced):]
        kept = len(rest.rstrip(b"\0"))
        assert rest[:kept] == later[:kept] and set(rest[kept:]) <= {0} and len(rest) <= len(later)
        lengths.add(kept)
        zero_tails += len(rest) > kept
    assert lengths == set(range(len(later) + 1))
    assert zero_tails > 0


def test_a_file_never_fsynced_may_lose_everything_and_an_unsynced_new_name_may_vanish():
    outcomes = set()
    for seed in range(100):
        d = disk(seed)
        write(d, f"{D}/f", b"abc")
        d.power_loss()
        outcomes.add(d.read_file(f"{D}/f") if d.exists(f"{D}/f") else None)
    assert None in outcomes and b"" in outcomes and b"abc" in outcomes


def test_a_rename_is_durable_only_after_a_directory_fsync():
    kept_old = 0
    for seed in range(50):
        d = disk(seed)
        write(d, f"{D}/a.tmp", b"new", sync=True)  # its name is committed with its fsync
        d.replace(f"{D}/a.tmp", f"{D}/a")
        d.power_loss()
        if d.exists(f"{D}/a.tmp"):
            assert not d.exists(f"{D}/a")
            kept_old += 1
        else:
            assert d.read_file(f"{D}/a") == b"new"
    assert 0 < kept_old < 50
    for seed in range(50):
        d = disk(seed)
        write(d, f"{D}/a.tmp", b"new", sync=True)
        d.replace(f"{D}/a.tmp", f"{D}/a")
        d.fsync_path(D)
        d.power_loss()
        assert d.read_file(f"{D}/a") == b"new" and not d.exists(f"{D}/a.tmp")


def test_an_unlink_is_undone_by_a_power_loss_before_the_directory_fsync():
    undone = sum(1 for seed in range(50) if _unlink_then_power_loss(seed))
    assert 0 < undone < 50


def _unlink_then_power_loss(seed: int) -> bool:
    d = disk(seed)
    write(d, f"{D}/f", b"x", sync=True)
    d.unlink(f"{D}/f")
    assert not d.exists(f"{D}/f")
    d.power_loss()
    return d.exists(f"{D}/f")


def test_a_process_crash_is_not_a_power_loss():
    """Nothing happens to the disk unless power_loss is called: what was written is read back, fsynced or not."""
    d = disk()
    write(d, f"{D}/f", b"abc")
    assert d.read_file(f"{D}/f") == b"abc" and d.listdir(D) == ["f"]


def test_a_failed_dir_raises_eio_from_every_call():
    d = disk()
    d.makedirs("/other")
    write(d, f"{D}/f", b"abc")
    fd = d.open(f"{D}/f", os.O_RDONLY)
    d.fail_dir(D)
    calls = [lambda: d.open(f"{D}/f", os.O_RDONLY), lambda: d.pread(fd, 1, 0), lambda: d.fsync(fd),
             lambda: d.write_file(f"{D}/g", b""), lambda: d.listdir(D), lambda: d.unlink(f"{D}/f"),
             lambda: d.truncate(f"{D}/f", 0), lambda: d.getsize(f"{D}/f"), lambda: d.read_file(f"{D}/f"),
             lambda: d.replace(f"{D}/f", f"{D}/g"), lambda: d.mkdir(f"{D}/sub"), lambda: d.rename(D, "/moved")]
    for call in calls:
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EIO
    assert not d.exists(f"{D}/f") and not d.isdir(D)
    write(d, "/other/f", b"fine")  # another dir is unaffected
    assert d.read_file("/other/f") == b"fine"


def test_same_seed_same_disk_after_a_power_loss():
    def run(seed: int) -> list[tuple[str, bytes]]:
        d = disk(seed)
        for i in range(5):
            write(d, f"{D}/f{i}", bytes([i]) * 50, sync=i % 2 == 0)
            write(d, f"{D}/f{i}", bytes([i + 1]) * 50)
        d.power_loss()
        return [(n, d.read_file(f"{D}/{n}")) for n in d.listdir(D)]
    assert run(7) == run(7)
    assert any(run(7) != run(s) for s in range(8, 12))


# ------------------------------------------------------------------------------------------------ logs on a SimDisk


def _batch(i: int) -> bytes:
    return build_batch([Record(0, 0, None, f"v{i}".encode() * 20)], first_timestamp=1000 + i)


def _values(log: Log) -> list[bytes]:
    out = []
    for segment in log.segments:
        for batch in iter_batches(segment.read(0, segment.size)):
            out.extend(r.value for r in read_records(batch))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_log_recovery_truncates_a_torn_tail_and_keeps_the_flushed_batches(seed: int):
    """Log recovery (LogSegment.recover) after a power loss: the log holds a prefix of what was appended, every
    batch whole and CRC-valid (nothing torn is served), and at least every batch below the flushed offset."""
    d = disk(seed)
    lm = LogManager([D], disk=d)
    log = lm.get_or_create_log(TP, is_new=True)
    for i in range(10):
        log.append_as_leader(_batch(i), 0, 1000 + i)
    log.flush()
    for i in range(10, 20):
        log.append_as_leader(_batch(i), 0, 1000 + i)
    d.power_loss()
    again = LogManager([D], disk=d).get_log(TP)
    assert again is not None
    values = _values(again)
    expected = [f"v{i}".encode() * 20 for i in range(20)]
    assert values == expected[:len(values)] and len(values) >= 10
    assert again.log_end_offset == len(values)
    again.append_as_leader(_batch(99), 0, 2000)  # appends go on after the truncated tail
    assert _values(again)[-1] == b"v99" * 20


def test_the_power_loss_tears_some_logs_in_the_middle_of_a_batch():
    """The property above is not vacuous: some seeds leave a partial batch that recovery cuts off."""
    cut = 0
    for seed in range(40):
        d = disk(seed)
        log = LogManager([D], disk=d).get_or_create_log(TP, is_new=True)
        for i in range(10):
            log.append_as_leader(_batch(i), 0, 1000 + i)
        d.power_loss()
        path = log.segments[0].log_path
        size = d.getsize(path) if d.exists(path) else 0
        again = LogManager([D], disk=d).get_log(TP)
        if again is not None and again.segments[0].size < size:
            cut += 1
    assert cut > 0


def test_a_log_manager_on_a_failed_dir_takes_it_offline():
    d = disk()
    d.fail_dir(D)
    lm = LogManager([D], disk=d)
    assert lm.offline_dirs == {D}
    with pytest.raises(KafkaStorageError):
        lm.get_or_create_log(TP, is_new=True)


# ------------------------------------------------------------------------------------------------ in the sim


def _as_crash(f) -> tuple:
    return f.step, f.a, f.b, "crash" if f.kind in ("power-loss", "logdir-fail", "crash-restart") else f.kind


def test_power_losses_are_drawn_from_a_stream_of_their_own():
    """A share of the crashes became power losses; every fault keeps its step, broker and the rest of its kind."""
    import sim.faults
    from sim.faults import schedule

    def without(seed: int) -> list:
        share = sim.faults.POWER_LOSS_SHARE
        sim.faults.POWER_LOSS_SHARE = 0.0
        try:
            return schedule(seed, 50, 3)
        finally:
            sim.faults.POWER_LOSS_SHARE = share

    count = 0
    for seed in range(1, 60):
        faults = schedule(seed, 50, 3)
        count += sum(f.kind == "power-loss" for f in faults)
        assert [_as_crash(f) for f in faults] == [_as_crash(f) for f in without(seed)]
    assert count > 0


def test_a_power_loss_in_the_sim_tears_the_broker_s_disk_and_the_seed_stays_clean():
    """Seed 6: b0 loses power at 34.2 s, 2 s after its restart from a crash (its disk loses 578 unsynced bytes; 674
    before the acks=1 and acks=0 producers wrote half as often, 615 before sim/clients.py's clients); it restarts on
    what its disk kept (its logs recovered, a torn tail cut off, the rest fetched again from the leader) and nothing
    acknowledged is lost."""
    from kactor.sim_boot import SimBoot
    from sim.run import play, start_cluster

    cluster = start_cluster(6, SimBoot())
    try:
        result = play(cluster, 6, 50)
        events = cluster.sim.events
    finally:
        cluster.close()
    assert result.violations == ()
    lost = [e for e in events if "disk after the power loss" in e]
    assert lost == ["34200.000 b0 disk after the power loss: 0 files and 578 bytes lost"]


def test_a_failed_log_dir_halts_the_broker_which_restarts_on_a_new_disk_and_the_run_is_deterministic():
    """Seed 9: b0's log dir fails at 37.2 s; its next write fails, the probe reports the dir, and with no live dir
    left the broker halts (LogManager.handleLogDirFailure); it restarts at 45.2 s on a new, empty disk and fetches
    its replicas again. Nothing acknowledged is lost, and the same seed gives the same run."""
    from kactor.sim_boot import SimBoot
    from sim.faults import schedule
    from sim.run import play, start_cluster

    assert "logdir-fail b0" in [str(f) for f in schedule(9, 50, 3)]
    runs = []
    for _ in range(2):
        cluster = start_cluster(9, SimBoot())
        try:
            result = play(cluster, 9, 50)
            events = [e for e in cluster.sim.events if e.split(" ", 1)[1].startswith(("b0 log dir", "b0 shutdown",
                                                                                      "b0 start"))]
        finally:
            cluster.close()
        runs.append((result.violations, result.event_digest, events))
    assert runs[0] == runs[1]
    assert runs[0][0] == ()
    assert runs[0][2] == [
        "0.000 b0 start (incarnation 1)", "37200.000 b0 log dir fails",
        "37200.500 b0 shutdown complete: Shutdown broker because all log dirs in /sim-root/broker-0 have failed",
        "45200.000 b0 start (incarnation 2)"]


def test_a_recovery_that_keeps_a_torn_batch_is_caught_at_seed_4(monkeypatch):
    """Power: with LogSegment.recover's CRC check taken out, seed 4's power loss of b1 leaves batches whose tails are
    zeros (their length written, their data not), recovery keeps them, and the checks find them below b1's high
    watermark (seed 1 before __consumer_offsets and the consumer group changed the runs, then seeds 4, 17, 18, 21,
    22 and 37 of 1-37; on both partitions before sim-0 became a quiet partition; before the invariant caught
    ProtocolError, the check raised it; seeds 5 and 21 once read a value of zeros at an acknowledged offset instead).
    With the check, seed 4 is clean."""
    import core.broker.log_segment as log_segment
    from kactor.sim_boot import SimBoot
    from sim.run import run_seed

    assert run_seed(4, 50, SimBoot()).violations == ()
    monkeypatch.setattr(log_segment, "crc_valid", lambda batch: True)
    assert run_seed(4, 50, SimBoot()).violations == (
        "sim-0: ISR replica b1 holds a corrupt batch below its HW: 11 bytes after the batch's 0 records",)


def test_a_broker_whose_log_dir_failed_near_the_end_is_replaced_before_the_final_checks():
    """Seed 64, two defects of the simulator found by the first campaign with log-dir failures: b0's dir fails at
    48.2 s while it is cut off from b1; the checks read its log and got EIO (the run crashed), and b0, halting only
    at 51.2 s, after the steps, was never restarted (its ISR check at the end failed). A replica on a failed dir is
    not read, and the end of the run stops such a broker and restarts it on a new disk with the others."""
    from kactor.sim_boot import SimBoot
    from sim.faults import schedule
    from sim.run import run_seed

    assert "logdir-fail b0" in [str(f) for f in schedule(64, 50, 3) if f.step == 48]
    assert run_seed(64, 50, SimBoot()).violations == ()


@pytest.mark.parametrize(("seed", "losses"), [
    # b2's log dir fails at 39 s; it starts on a new disk at 47.2 s as the only ISR member of both of sim's
    # partitions (the others out behind a cut and a slow link) and leads them empty: every ISR replica then holds
    # new records where acknowledged ones were ("ISR replica b2 has 'i7012-24'" before the excuse)
    (7012, [(47200, 2, "started on a new disk", ["sim-0", "sim-1"])]),
    # b0 loses power at 21.2 s as the only ISR member of sim-1: the idempotent producer's next batch follows
    # sequences the recovered log lacks (OUT_OF_ORDER_SEQUENCE_NUMBER before the excuse), as with Kafka
    (2845, [(21200, 0, "lost power", ["sim-1"])]),
])
def test_records_lost_with_a_sole_isr_member_s_disk_are_kafka_s_loss_not_a_violation(
        seed: int, losses: list[tuple[int, int, str, list[str]]]) -> None:
    """Two of the ten failing seeds of the first 10,000-seed campaign with every workload (f0efaf6, 2026-11-27
    04:39-05:12): each lost acknowledged records because the partition's sole ISR member lost power or came back on a
    replaced disk. Kafka acknowledges without fsync and elects that member cleanly, so it loses them too; the checks
    excuse exactly that (`Sim.lost_to_power`, `Sim.lost_any_to_power`) and the seeds are clean."""
    from kactor.sim_boot import SimBoot
    from sim.run import play, start_cluster
    from sim.runtime import START_MS

    cluster = start_cluster(seed, SimBoot())
    try:
        result = play(cluster, seed, 50)
        found = [(round(at - START_MS), b, what, sorted(f"{tp.topic}-{tp.partition}" for tp in alone))
                 for at, b, what, alone in cluster.sim.sole_isr_losses if alone]
    finally:
        cluster.close()
    assert result.violations == ()
    assert found == losses


def test_what_a_power_loss_keeps_does_not_depend_on_how_deep_the_disk_is_mounted():
    """The same writes under a disk mounted at a shallow and at a deep folder keep the same bytes and names for every
    seed: the folders above the mount are not journalled. Before, `kactor sim` (a run folder above each seed's) and
    run_seed alone drew differently after a power loss, one mkdir apart (seed 7856)."""
    def kept(mount: str, seed: int) -> tuple[list[tuple[str, bytes]], tuple[int, int]]:
        d = SimDisk(random.Random(seed), mount=mount)
        top = f"{mount}/broker-0"
        d.makedirs(f"{top}/t-0")
        write(d, f"{top}/t-0/a", b"A" * 40)  # nothing fsynced: the whole journal is at stake, as a broker's is
        write(d, f"{top}/t-0/b", b"C" * 30)
        d.rename(f"{top}/t-0/b", f"{top}/t-0/c")
        change = d.power_loss()
        files = sorted((os.path.relpath(p, top), d.read_file(p)) for p in d.files if p.startswith(top + "/"))
        return files, (change.lost_files, change.lost_bytes)

    for seed in range(50):
        assert kept("/shm/sim-1", seed) == kept("/shm/run-x/deeper/sim-1", seed)

