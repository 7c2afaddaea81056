"""`pip install .` into a fresh venv outside the checkout gives a kactor whose commands work from anywhere: `kactor
bench --help` (bench/ is a package of the distribution, imported without touching sys.path) and `kactor demo` (a
3-broker cluster through the demo's story, its traces replayed with --check).

Offline and quick: the venv has no pip and no packages of its own; a .pth file puts the test interpreter's
site-packages after its own, so the dependencies are the ones installed already, and kactor is built from a copy
of the source with ``--no-deps --no-build-isolation`` by the test interpreter's pip (``--python``).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _included() -> list[str]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]["include"]


def _copy_source(dest: Path) -> None:
    """What a source distribution holds: pyproject.toml, README.md and the packages pyproject.toml includes."""
    include = _included()
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    for entry in sorted(REPO.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").exists() and any(fnmatch.fnmatch(entry.name, p)
                                                                         for p in include):
            shutil.copytree(entry, dest / entry.name, ignore=shutil.ignore_patterns("__pycache__"))


def _venv(path: Path) -> Path:
    """A venv without pip whose site-packages ends with the test interpreter's (the dependencies, not kactor: a
    path a .pth file adds is not scanned for .pth files, so the checkout's editable install stays out)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "kactor-test-deps.pth").write_text("".join(p + "\n" for p in sorted(outer)))
    return python


def _env() -> dict[str, str]:
    """This environment without what points into the checkout (the suite runs with PYTHONPATH=the checkout)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def test_every_package_of_the_checkout_is_in_the_distribution() -> None:
    """A new top-level package left out of pyproject's include list would be missing from an installed kactor."""
    packages = sorted(d.name for d in REPO.iterdir() if (d / "__init__.py").is_file() and d.name != "tests")
    assert {"actors", "bench", "core", "edges", "kactor", "messages"} <= set(packages)
    left_out = [p for p in packages if not any(fnmatch.fnmatch(p, pattern) for pattern in _included())]
    assert not left_out, f"add to [tool.setuptools.packages.find] include in pyproject.toml: {left_out}"


@pytest.mark.slow
@pytest.mark.cluster
def test_pip_install_outside_the_checkout_runs_bench_and_the_demo(tmp_path: Path) -> None:
    src, venv, work = tmp_path / "src", tmp_path / "venv", tmp_path / "work"
    _copy_source(src)
    python = _venv(venv)
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-build-isolation", "--no-index", str(src)],
                             capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    work.mkdir()
    kactor = str(venv / "bin" / "kactor")

    probe = ("import bench, kactor, messages, spark.session as s, os; "
             "print(kactor.__file__, bench.__file__, messages.__file__, os.path.isfile(s.LOG4J_CONFIG))")
    where = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=work, env=_env(),
                           check=True).stdout.split()
    site = str(venv)
    assert all(p.startswith(site) for p in where[:3]), where  # the installed copies, not the checkout's
    assert where[3] == "True"  # the Spark report's log4j configuration is shipped (package data)

    bench_help = subprocess.run([kactor, "bench", "--help"], capture_output=True, text=True, cwd=work, env=_env(),
                                timeout=60)
    assert bench_help.returncode == 0, bench_help.stderr
    assert "failover-rf3" in bench_help.stdout and "controlled-shutdown" in bench_help.stdout

    demo = subprocess.run([kactor, "demo", "--out", str(work / "demo"), "--no-report"], capture_output=True,
                          text=True, cwd=work, env=_env(), timeout=600)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-2000:]
    assert "[replay] every trace replayed identically" in demo.stdout, demo.stdout[-3000:]
    assert "steps that did not complete" not in demo.stdout, demo.stdout[-3000:]
    traces = sorted(p.name for p in (work / "demo" / "traces").iterdir())
    assert {"broker-0.jsonl", "broker-1.jsonl", "broker-2.jsonl"} <= set(traces), traces
