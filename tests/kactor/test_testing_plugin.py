"""kactor.testing's pytest plugin as a project's pytest loads it (the pytest11 entry point of the installed kactor), in
pytest sessions of their own on a scratch folder: it costs nothing to a session that asks for none of its fixtures,
skips with why where Java or ZooKeeper is missing, refuses bad options, and its fixtures' names are not the suite's.
No cluster starts here (tests/kactor/test_testing_cluster.py and tests/test_example_pytest_plugin.py start them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kactor.testing import plugin
from kactor.testing.cluster import Fault, topic_prefix

REPO = Path(__file__).resolve().parents[2]
PLUGIN_FIXTURES = {"kafka_cluster", "kafka_topic", "bootstrap_servers", "kafka_client_config"}


def inner_pytest(folder: Path, test_text: str, *args: str, env: dict[str, str] | None = None,
                 ) -> subprocess.CompletedProcess[str]:
    """``pytest -rs`` on ``folder`` holding ``test_text`` as its one test file, away from the checkout (the
    installed kactor's entry point loads the plugin)."""
    (folder / "test_inner.py").write_text(test_text)
    (folder / "pytest.ini").write_text("[pytest]\n")  # this folder is the rootdir, not the checkout
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=folder, env={**base, **(env or {})}, timeout=120)


def test_a_session_without_its_fixtures_starts_and_imports_nothing_of_a_cluster(tmp_path: Path) -> None:
    result = inner_pytest(tmp_path, (
        "import sys\n"
        "def test_plain(request):\n"
        "    assert request.config.pluginmanager.hasplugin('kactor')\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith(('kactor.testing.cluster', 'kactor.cluster',\n"
        "                                                            'zk_bridge', 'confluent_kafka', 'kazoo')))\n"
        "    assert loaded == []\n"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_kafka_cluster_is_skipped_saying_why_where_java_is_missing(tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    result = inner_pytest(tmp_path, "def test_needs_kafka(kafka_topic):\n    raise AssertionError('ran')\n",
                          env={"PATH": str(empty)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "kactor: no Kafka cluster can start here: java not found on PATH: apt-get install" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--kactor-brokers", "0"), "--kactor-brokers must be at least 1, not 0"),
    (("--kactor-override", "novalue"), "a kactor broker override is KEY=VALUE, not 'novalue'"),
    (("-o", "kactor_brokers=three"), "kactor_brokers must be a number of brokers, not 'three'"),
])
def test_bad_options_are_refused_before_anything_starts(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = inner_pytest(tmp_path, "def test_needs_kafka(kafka_cluster):\n    pass\n", *args)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert message in result.stderr


def test_the_plugins_fixtures_are_named_apart_from_the_suites() -> None:
    """kactor's own suite loads the plugin too: a fixture of the same name in a conftest would shadow it (or it
    the conftest's) without a word."""
    suite = set()
    for conftest in (REPO / "tests").rglob("conftest.py"):
        suite |= set(re.findall(r"@pytest\.fixture[^\n]*\n(?:@[^\n]*\n)*def (\w+)", conftest.read_text()))
    assert {"zk_server", "start_cluster", "shared_cluster"} <= suite  # the reading finds them
    assert not suite & PLUGIN_FIXTURES
    assert {name for name in dir(plugin) if name in PLUGIN_FIXTURES} == PLUGIN_FIXTURES


def test_topic_prefix_is_a_legal_kafka_topic_name() -> None:
    assert topic_prefix("test_orders[1-uuid]") == "test_orders_1-uuid"
    assert topic_prefix("x" * 300) == "x" * 200
    assert topic_prefix("[]") == "test"


def test_a_fault_heals_once() -> None:
    healed = []
    fault = Fault("broker 1 paused", lambda: healed.append(1))
    with fault:
        assert healed == []
    fault.heal()
    assert healed == [1]
    assert repr(fault) == "<Fault broker 1 paused (healed)>"
