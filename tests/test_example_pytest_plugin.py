"""examples/pytest-plugin (its own pyproject.toml, an exactly-once consume-transform-produce service, tests that kill
an output partition's leader mid-run) passes with plain ``pytest`` where kactor is installed: run as its user runs it,
from a copy outside the checkout, by this suite's interpreter (kactor installed in it, editable), with nothing of the
checkout on the path — the plugin comes from the installed kactor's pytest11 entry point alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pytest-plugin"


@pytest.mark.slow
@pytest.mark.cluster
def test_the_example_projects_tests_pass_against_an_installed_kactor(tmp_path: Path) -> None:
    project = tmp_path / "pytest-plugin"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTHONHOME")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=600)
    out = "\n".join(line for line in run.stdout.splitlines() if not line.startswith("%"))  # librdkafka's log lines
    assert run.returncode == 0, out[-6000:] + run.stderr[-2000:]
    assert "4 passed" in out, out[-3000:]
