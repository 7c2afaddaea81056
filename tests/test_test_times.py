"""scripts/test_times.py: the run's time per module, from the JUnit XML `scripts/test` has pytest write."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

XML = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.cluster.test_a" name="test_one" time="30.5" />
<testcase classname="tests.cluster.test_a" name="test_two[x]" time="9.5" />
<testcase classname="tests.core.test_b.TestThing" name="test_three" time="2.0" />
<testcase classname="tests.test_c" name="test_four" time="8.0" />
</testsuite></testsuites>"""


def _module():  # noqa: ANN202 - the script, loaded from its file as scripts/test runs it
    spec = importlib.util.spec_from_file_location("test_times", os.path.join(ROOT, "scripts", "test_times.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_times_are_summed_per_module_the_longest_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.xml"
    path.write_text(XML)
    m = _module()
    rows, total = m.module_times(str(path))
    assert total == 50.0
    assert rows == [("tests/cluster/test_a.py", 40.0, 2), ("tests/test_c.py", 8.0, 1), ("tests/core/test_b.py", 2.0, 1)]
    assert m.main([str(path), "2"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "time by module, summed over the workers: 50 s in 4 tests; the 2 longest:",
        "    40.0 s  80.0%     2  tests/cluster/test_a.py",
        "     8.0 s  16.0%     1  tests/test_c.py"]


def test_an_unreadable_file_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.xml").write_text("<testsuites>")
    assert _module().main([str(tmp_path / "bad.xml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"test_times: cannot read {tmp_path / 'bad.xml'}: ") and err.count("\n") == 1
    assert _module().main([]) == 2
