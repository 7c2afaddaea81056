"""bench.instructions: its probes run against this checkout's APIs, its base tree is the commit as committed, and its
arithmetic is the work minus the set-up. (The callgrind runs themselves are the bench's, not the suite's.)"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import tempfile

import pytest

from bench import instructions as bi


def test_seeds_parse_a_range_and_refuse_an_empty_one() -> None:
    assert bi._seeds("4") == (4, 4)
    assert bi._seeds("1-50") == (1, 50)
    for bad in ("0-3", "5-2"):
        with pytest.raises(argparse.ArgumentTypeError):
            bi._seeds(bad)


def test_a_count_is_the_work_over_its_units() -> None:
    assert bi.Count(3_000_000, 3).per_unit == 1_000_000
    assert bi._fmt(193_400) == "193.4 k"
    assert bi._fmt(2_034_000_000) == "2,034.0 M"


def test_the_sim_probe_runs_a_seed_in_this_checkout() -> None:
    """The probe names cmd_sim's private set-up: a move of it fails here, not in a bench run an hour later."""
    w = bi.Workload("sim seeds 1-1", "seed", bi._SIM_PROBE, ("1", "1", "2"))
    instr, work_s, units = bi._run_probe(bi.ROOT, w, "run", valgrind=False)
    assert instr is None
    assert units == 1
    assert work_s > 0


def test_the_replay_probe_counts_every_traced_message(recorded_trace: str) -> None:
    trace_dir = os.path.dirname(recorded_trace)
    with open(recorded_trace, encoding="utf-8") as f:
        lines = sum(1 for _ in f) - 1  # the header is no message
    w = bi.Workload("replay --no-check", "message", bi._REPLAY_PROBE, (trace_dir,))
    _, work_s, units = bi._run_probe(bi.ROOT, w, "run", valgrind=False)
    assert units == lines > 100
    assert work_s > 0
    _, _, setup_units = bi._run_probe(bi.ROOT, w, "setup", valgrind=False)
    assert setup_units == 0  # the set-up replays nothing


def test_the_base_tree_is_the_commit_not_the_working_tree(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    rev = subprocess.run(["git", "-C", bi.ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    tree = bi.base_tree(rev, str(tmp_path))
    committed = subprocess.run(["git", "-C", bi.ROOT, "show", f"{rev}:pyproject.toml"], capture_output=True,
                               text=True, check=True).stdout
    with open(os.path.join(tree, "pyproject.toml"), encoding="utf-8") as f:
        assert f.read() == committed
    assert not os.path.exists(os.path.join(tree, ".venv"))


def test_the_produce_probe_appends_every_batch_on_leader_and_follower() -> None:
    """The produce workload's unit is the bytes of its batches (10 of 100 1,000-byte records a MB), reported per MB;
    the probe itself asserts that both replicas hold every record, so a count of no work cannot pass for a cheap one."""
    w = bi.Workload("produce 1 MB RF 2", "MB", bi._PRODUCE_PROBE, ("1",), 1e6)
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "kactor-instr-produce-*")))
    instr, work_s, units = bi._run_probe(bi.ROOT, w, "run", valgrind=False)
    assert instr is None
    assert 10 * 100 * 1000 < units < 10 * 100 * 1100  # the records plus their batches' and records' framing
    assert work_s > 0
    _, _, setup_units = bi._run_probe(bi.ROOT, w, "setup", valgrind=False)
    assert setup_units == 0
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "kactor-instr-produce-*"))) == before  # removed at exit
    assert bi.Count(2_000_000, units).per_unit * w.scale == pytest.approx(2_000_000 / (units / 1e6))


def test_unknown_workloads_and_an_empty_produce_are_refused(capsys) -> None:  # noqa: ANN001 - pytest's capsys
    for argv in (["--base", "HEAD", "--workloads", "fetch"], ["--base", "HEAD", "--workloads", "produce", "--mb", "0"]):
        with pytest.raises(SystemExit):
            bi.main(argv)
    assert "unknown workload(s) fetch: replay, sim, produce" in capsys.readouterr().err


def test_a_tree_that_cannot_record_says_so_with_its_error(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    """The replay workload's trace is recorded by the base's code (`record_in`: the tree's own bench.common, ahead
    of this checkout's install): one whose recorder fails ends the bench with its error, not with a folder of nothing
    to replay."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "__init__.py").write_text("")
    (tmp_path / "bench" / "common.py").write_text("raise RuntimeError('this tree records nothing')\n")
    with pytest.raises(SystemExit) as e:
        bi.record_in(str(tmp_path))
    assert f"recording the replay workload's trace in {tmp_path} failed (exit 1)" in str(e.value)
    assert "RuntimeError: this tree records nothing" in str(e.value)


def test_the_probes_compile_attrs_code_in_every_process() -> None:
    """With the attrs code cache on, a fresh base tree's set-up probe wrote the cache its run probe read, and the
    difference of the two lost what the cache saves: both probes compile, in both trees."""
    assert bi._env(bi.ROOT)["KACTOR_ATTRS_CODE_CACHE"] == "0"
