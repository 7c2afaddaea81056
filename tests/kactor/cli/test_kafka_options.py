"""Every option of Kafka 2.6.3's tools (kactor/cli/kafka_options.py's table, read from their ``accepts(...)``) is
taken by its kactor command under Kafka's name, or refused with the table's one line and exit 2: an option of 2.6.3
that kactor neither takes nor refuses fails here."""

from __future__ import annotations

import pytest

from kactor.cli import build_parser
from kactor.cli.kafka_options import OPTIONS, KafkaOption, options_of


def _argv(o: KafkaOption) -> list[str]:
    return [o.command, f"--{o.name}"] + ([] if o.value is None else [o.value])


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: f"{o.command}--{o.name}")
def test_each_kafka_option_is_taken_or_refused_in_one_line(option: KafkaOption,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    argv = _argv(option)
    parser = build_parser(argv)
    if option.refusal is None:
        try:
            args = parser.parse_args(argv)
        except SystemExit:  # another required option missing is fine; the option itself must be known
            err = capsys.readouterr().err
            assert "unrecognized arguments" not in err, err
            assert f"argument --{option.name}" not in err, err  # its value parsed
        else:
            assert args.command == option.command
    else:
        with pytest.raises(SystemExit) as e:
            parser.parse_args(argv)
        assert e.value.code == 2
        assert capsys.readouterr().err == f"kactor {option.command}: error: {option.refusal}\n"


def test_every_refusal_names_a_kactor_option_and_is_one_line() -> None:
    for o in OPTIONS:
        if o.refusal is not None:
            assert "\n" not in o.refusal
            assert o.refusal.startswith(f"--{o.name} is not "), o
            assert "; use --" in o.refusal or "leave it out" in o.refusal, o


# 2.6.3's accepts(...) of each tool, as `git show 2.6.3:core/src/main/scala/kafka/<admin|tools>/<Tool>.scala` has them
ACCEPTS_2_6_3 = {
    "topics": "bootstrap-server command-config zookeeper list create delete alter describe topic config delete-config "
              "partitions replication-factor replica-assignment under-replicated-partitions unavailable-partitions "
              "under-min-isr-partitions at-min-isr-partitions topics-with-overrides if-exists if-not-exists "
              "disable-rack-aware force exclude-internal",
    "configs": "zookeeper bootstrap-server command-config alter describe all entity-type entity-name entity-default "
               "add-config add-config-file delete-config force topic client client-defaults user user-defaults broker "
               "broker-defaults broker-logger zk-tls-config-file",
    "acls": "bootstrap-server command-config authorizer authorizer-properties topic cluster group transactional-id "
            "idempotent delegation-token resource-pattern-type add remove list operation allow-principal "
            "deny-principal principal allow-host deny-host producer consumer force zk-tls-config-file",
    "consumer-groups": "bootstrap-server group topic all-topics list describe all-groups delete timeout "
                       "command-config reset-offsets delete-offsets dry-run execute export to-offset from-file "
                       "to-datetime by-duration to-earliest to-latest to-current shift-by members verbose offsets "
                       "state",
    "reassign-partitions": "verify generate execute cancel list bootstrap-server command-config zookeeper "
                           "reassignment-json-file topics-to-move-json-file broker-list disable-rack-aware throttle "
                           "replica-alter-log-dirs-throttle timeout additional preserve-throttles",
    "leader-election": "bootstrap-server admin.config path-to-json-file topic partition all-topic-partitions "
                       "election-type",
    "preferred-replica-election": "path-to-json-file zookeeper bootstrap-server admin.config",
    "delete-records": "bootstrap-server offset-json-file command-config",
    "log-dirs": "bootstrap-server command-config describe topic-list broker-list",
    "broker-api-versions": "command-config bootstrap-server",
    "get-offsets": "broker-list topic partitions time offsets max-wait-ms",
    "dump-log": "print-data-log verify-index-only index-sanity-check files max-message-size deep-iteration "
                "value-decoder-class key-decoder-class offsets-decoder transaction-log-decoder",
    "produce": "topic broker-list bootstrap-server sync compression-codec batch-size message-send-max-retries "
               "retry-backoff-ms timeout request-required-acks request-timeout-ms metadata-expiry-ms max-block-ms "
               "max-memory-bytes max-partition-memory-bytes line-reader socket-buffer-size property "
               "producer-property producer.config",
    "consume": "topic whitelist partition offset consumer-property consumer.config formatter property from-beginning "
               "max-messages timeout-ms skip-message-on-error bootstrap-server key-deserializer value-deserializer "
               "enable-systest-events isolation-level group",
}


def test_the_table_is_2_6_3s_accepts_lists() -> None:
    keys = [(o.command, o.name) for o in OPTIONS]
    assert len(keys) == len(set(keys))
    assert {c: [o.name for o in options_of(c)] for c in ACCEPTS_2_6_3} == \
        {c: names.split() for c, names in ACCEPTS_2_6_3.items()}
    assert {o.command for o in OPTIONS} == set(ACCEPTS_2_6_3)
