"""What a simulated disk kept, carried to a replay (issue #28): sim/disk.py's `DiskChange` in the next incarnation's
trace header, applied by kactor/trace/disk_change.py to a replay's scratch log dir; and a seed with a power loss or a
new disk replays exactly, every incarnation."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from kactor.sim_boot import SimBoot
from kactor.trace.disk_change import apply_disk_change
from kactor.trace.reader import TraceError, read_header
from sim.disk import NEW_DISK, SimDisk
from sim.faults import schedule
from sim.run import run_seed

TOP = "/logs/broker-0"



def _busy_disk(seed: int) -> SimDisk:
    """A disk with what a broker does to it: appends fsynced or not, a checkpoint replaced by a rename (fsynced or
    not), a file rewritten in place, a file unlinked, a dir made; some of it before the last commit."""
    d = SimDisk(random.Random(seed))
    d.makedirs(f"{TOP}/t-0")
    for i in range(3):
        d.append_file(f"{TOP}/t-0/0.log", bytes(range(1 + i, 40 + i)))
        if i == 1:
            d.fsync_path(f"{TOP}/t-0/0.log")
    d.write_file(f"{TOP}/cp", b"0\n1\nt 0 5\n", fsync=True)
    d.write_file(f"{TOP}/cp.tmp", b"0\n1\nt 0 9\n", fsync=seed % 2 == 0)
    d.replace(f"{TOP}/cp.tmp", f"{TOP}/cp")
    d.write_file(f"{TOP}/epochs", b"0\n2\n0 0\n1 4\n", fsync=True)
    d.write_file(f"{TOP}/epochs", b"0\n1\n0 0\n")  # rewritten in place, not fsynced: the old bytes may be kept
    d.write_file(f"{TOP}/gone", b"x" * 30, fsync=True)
    d.unlink(f"{TOP}/gone")
    d.makedirs(f"{TOP}/t-1")
    d.append_file(f"{TOP}/t-1/0.log", b"y" * 25)
    return d


def _mirror(d: SimDisk, root: Path) -> None:
    """The scratch dir as a replay of the earlier incarnations leaves it: every write made, none lost."""
    for path in sorted(p for p in d.dirs if p == TOP or p.startswith(TOP + "/")):
        os.makedirs(root / os.path.relpath(path, TOP), exist_ok=True)
    for path, inode in d.files.items():
        (root / os.path.relpath(path, TOP)).write_bytes(bytes(inode.data))


def _tree(root: Path) -> tuple[set[str], dict[str, bytes]]:
    if not root.exists():
        return set(), {}
    dirs = {os.path.relpath(p, root) for p, _, _ in os.walk(root)}
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    return dirs, files


def _disk_tree(d: SimDisk) -> tuple[set[str], dict[str, bytes]]:
    dirs = {os.path.relpath(p, TOP) for p in d.dirs if p == TOP or p.startswith(TOP + "/")}
    return dirs, {os.path.relpath(p, TOP): bytes(i.data) for p, i in d.files.items() if p.startswith(TOP + "/")}


def test_the_scratch_dir_becomes_what_the_simulated_disk_kept_to_the_byte(tmp_path: Path) -> None:
    """Over seeds, every kind of loss: torn appends, zero tails, an undone rename (the old checkpoint back under its
    name, its bytes from no path of the scratch dir), a rewrite's old bytes, an undone unlink, lost files and dirs.
    The scratch dir, a copy of the disk before, ends up equal to the SimDisk after, byte for byte."""
    kinds: set[str] = set()
    for seed in range(60):
        d = _busy_disk(seed)
        root = tmp_path / f"s{seed}"
        _mirror(d, root)
        sizes = {os.path.relpath(p, TOP): len(i.data) for p, i in d.files.items()}
        change = d.power_loss()
        header = change.header(TOP)
        for entry in header["files"]:
            kinds.update(k for k in ("from", "tail", "zeros") if k in entry)
            source = entry.get("from", entry["path"])
            if source is not None and entry["keep"] < sizes[source] and "tail" not in entry:
                kinds.add("torn")  # cut short (then zeros or nothing)
        kinds.add("files lost" if len(header["files"]) < len(sizes) else "")
        apply_disk_change(header, str(root))
        assert _tree(root) == _disk_tree(d), seed
    assert {"from", "tail", "zeros", "torn", "files lost"} <= kinds  # the seeds covered each kind of entry


def test_a_new_disk_leaves_nothing_and_an_incomplete_scratch_dir_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "log-dir-0"
    _mirror(_busy_disk(1), root)
    apply_disk_change(NEW_DISK.header(TOP), str(root))
    assert not root.exists()  # the broker makes its log dir again, empty, as on the simulated new disk

    d = _busy_disk(1)
    change = d.power_loss()
    (tmp_path / "empty").mkdir()
    with pytest.raises(TraceError, match="earlier incarnations"):
        apply_disk_change(change.header(TOP), str(tmp_path / "empty"))
    with pytest.raises(TraceError, match="leaves the log dir"):
        apply_disk_change({"new": False, "dirs": ["."], "files": [{"path": "../x", "keep": 0}]},
                          str(tmp_path / "empty"))


@pytest.mark.parametrize(("seed", "steps", "fault", "incarnation"), [
    (37, 20, "power-loss b2", "broker-2.1.jsonl"),  # b2's power loss: its torn disk
    (18, 20, "logdir-fail b0", "broker-0.1.jsonl"),  # b0's failed log dir: it restarts on a new disk
    # b0's log dir fails at step 32 and a fetch's read of it answers KAFKA_STORAGE_ERROR before the dir is taken
    # offline: the failed read is recorded (core/broker/log.py AppendFaults), or broker-0.jsonl diverges there
    (74, 50, "logdir-fail b0", "broker-0.1.jsonl"),
])
def test_a_seed_with_a_disk_fault_replays_every_incarnation_exactly(tmp_path: Path, seed: int, steps: int,
                                                                    fault: str, incarnation: str) -> None:
    """`kactor trace replay --check` of the seed's traces reproduces every message of every incarnation, the one
    after the disk fault included (it diverged at its first FetchRequest before the header carried the disk)."""
    from kactor.trace.replay import replay_many

    assert fault in [str(f) for f in schedule(seed, steps, 3)]
    run_seed(seed, steps, SimBoot(), trace_dir=str(tmp_path / "a"))
    header = read_header(str(tmp_path / "a" / incarnation))
    assert header["disk"]["new"] is fault.startswith("logdir-fail")
    assert all("disk" not in read_header(str(p)) for p in (tmp_path / "a").glob("*.jsonl") if p.name != incarnation)
    paths = sorted(str(p) for p in (tmp_path / "a").glob("*.jsonl"))
    results = replay_many(paths)
    assert [(os.path.basename(r.path), r.divergence) for r in results] == [
        (os.path.basename(p), None) for p in paths]
    assert all(r.compared > 50 for r in results)
    if steps > 20:
        return  # (the same seed twice: the short ones show it)
    # the same seed twice: the same traces, the disk in the header included
    run_seed(seed, steps, SimBoot(), trace_dir=str(tmp_path / "b"))
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
