"""2.6.3's options of kafka-topics.sh and kafka-configs.sh kactor once lacked: ``topics --under-min-isr-partitions``
and ``--at-min-isr-partitions`` (PartitionDescription.isUnderMinIsr / isAtMinIsrPartitions against the topic's
min.insync.replicas, --bootstrap-server only), ``--force`` taken as 2.6.3 takes it (and uses it not), and
``configs --add-config-file`` (parseConfigsToBeAdded's Utils.loadProps) and ``--broker-logger``. The admin client is
faked."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kactor.admin.configs import parse_configs_to_be_added
from kactor.cli import main
from kactor.cli.cmd_configs import add_config_of_file
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"


class _Admin:
    """list_topics (Metadata: partition -> (leader, replicas, isr)) and describe_configs (min.insync.replicas)."""

    def __init__(self, partitions: dict[str, dict[int, tuple[int, list[int], list[int]]]],
                 min_isr: dict[str, tuple[str, bool]]) -> None:
        self.partitions, self.min_isr = partitions, min_isr

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        topics = {t: SimpleNamespace(partitions={p: SimpleNamespace(id=p, leader=leader, replicas=replicas,
                                                                    isrs=isr)
                                                 for p, (leader, replicas, isr) in ps.items()})
                  for t, ps in self.partitions.items()}
        return SimpleNamespace(brokers={1: None, 2: None, 3: None}, topics=topics)

    def describe_configs(self, resources: list[Any], **kwargs: Any) -> dict[Any, concurrent.futures.Future]:
        out = {}
        for r in resources:
            value, default = self.min_isr[r.name]
            f: concurrent.futures.Future = concurrent.futures.Future()
            f.set_result({"min.insync.replicas": SimpleNamespace(name="min.insync.replicas", value=value,
                                                                 is_default=default)})
            out[r] = f
        return out


ADMIN = _Admin({"a": {0: (1, [1, 2, 3], [1, 2, 3]), 1: (2, [1, 2, 3], [2, 3]), 2: (3, [1, 2, 3], [3]),
                      3: (-1, [1, 2, 3], [1])},
                "b": {0: (1, [1, 2], [1])}},
               {"a": ("2", False), "b": ("1", True)})


def _topics(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from kactor import kafka_clients

    monkeypatch.setattr(kafka_clients, "admin_client", lambda *a, **k: ADMIN)
    code = main(["topics", "--bootstrap-server", B, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_under_min_isr_partitions(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _topics(monkeypatch, capsys, "--describe", "--under-min-isr-partitions") == (0, (
        "\tTopic: a\tPartition: 2\tLeader: 3\tReplicas: 1,2,3\tIsr: 3\n"
        "\tTopic: a\tPartition: 3\tLeader: none\tReplicas: 1,2,3\tIsr: 1\n"), "")


def test_at_min_isr_partitions(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _topics(monkeypatch, capsys, "--describe", "--at-min-isr-partitions", "--force") == (0, (
        "\tTopic: a\tPartition: 1\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\n"
        "\tTopic: b\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\n"), "")


@pytest.mark.parametrize(("argv", "message"), [
    (["--zookeeper", "127.0.0.1:1", "--describe", "--under-min-isr-partitions"],
     "option --under-min-isr-partitions can't be used with --zookeeper"),
    (["--bootstrap-server", B, "--describe", "--at-min-isr-partitions", "--under-replicated-partitions"],
     "only one of --under-replicated-partitions, --unavailable-partitions, --under-min-isr-partitions, "
     "--at-min-isr-partitions and --topics-with-overrides may be given"),
    (["--bootstrap-server", B, "--list", "--at-min-isr-partitions"],
     "option --at-min-isr-partitions can't be used with --list"),
])
def test_min_isr_reports_are_describe_and_bootstrap_server_only(argv: list[str], message: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["topics", *argv])
    assert (e.value.code, capsys.readouterr().err) == (2, f"kactor topics: error: {message}\n")


def test_add_config_file_gives_the_files_values(tmp_path: Path) -> None:
    f = tmp_path / "configs.properties"
    f.write_text("# the topic's\nretention.ms=1000\ncleanup.policy=compact,delete\n"
                 "follower.replication.throttled.replicas=0:1,1:2\nempty=\n")
    assert parse_configs_to_be_added(add_config_of_file(str(f))) == {
        "retention.ms": "1000", "cleanup.policy": "compact,delete",
        "follower.replication.throttled.replicas": "0:1,1:2", "empty": ""}


def test_add_config_file_reaches_the_alter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kactor.cli import configs_kafka

    f = tmp_path / "configs.properties"
    f.write_text("cleanup.policy=compact,delete\n")
    seen: dict[str, Any] = {}
    monkeypatch.setattr(configs_kafka, "run", lambda argv, servers, alter, types, names, add, delete, all_:
                        seen.update(types=types, names=names, add=parse_configs_to_be_added(add)) or 0)
    assert main(["configs", "--bootstrap-server", B, "--entity-type", "topics", "--entity-name", "t", "--alter",
                 "--add-config-file", str(f), "--force"]) == 0
    assert seen == {"types": ["topics"], "names": ["t"], "add": {"cleanup.policy": "compact,delete"}}
    assert main(["configs", "--bootstrap-server", B, "--broker-logger", "1", "--describe"]) == 0
    assert (seen["types"], seen["names"]) == (["broker-loggers"], ["1"])


@pytest.mark.parametrize(("extra", "message"), [
    (["--add-config", "a=b", "--add-config-file", "f.properties"],
     "Only one of --add-config or --add-config-file must be specified"),
    ([], "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"),
    (["--add-config-file", "/nonexistent/f.properties"],
     "Cannot read --add-config-file /nonexistent/f.properties: No such file or directory"),
])
def test_add_config_file_errors(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["configs", "--zookeeper", "127.0.0.1:1", "--entity-type", "topics", "--entity-name", "t",
                 "--alter", *extra])
    assert (code, capsys.readouterr().err) == (1, f"kactor configs: {message}\n")
