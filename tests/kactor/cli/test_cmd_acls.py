"""``kactor acls`` without ZooKeeper: AclCommand's option checks (usage errors, exit 2), what it builds from the
options (the command line's ACLs, the --producer / --consumer expansions, the resources and pattern types) and the
text it prints."""

from __future__ import annotations

import argparse

import pytest

from core.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kactor.cli import build_parser, main
from kactor.cli.cmd_acls import adding_text, current_text, filter_to_acls, resource_filters, resource_to_acls

ZK = ["--authorizer-properties", "zookeeper.connect=127.0.0.1:1"]
Op = AclOperation
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
TOPIC = ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.LITERAL)
GROUP = ResourcePatternFilter(ResourceType.GROUP, "app", PatternType.LITERAL)
TXN = ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, "tx", PatternType.LITERAL)
CLUSTER = ResourcePatternFilter(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL)


def parse(*argv: str) -> argparse.Namespace:
    return build_parser(["acls"]).parse_args(["acls", *ZK, *argv])


def entry(principal: str, op: AclOperation, permission: AclPermissionType = ALLOW,
          host: str = "*") -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, permission)


def test_the_command_lines_acls_on_each_resource() -> None:
    args = parse("--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob", "--operation", "Describe",
                 "--operation", "All", "--allow-host", "10.0.0.1", "--deny-principal", "User:eve", "--topic",
                 " orders ", "--group", "app", "--cluster")
    acls = [entry("User:alice", Op.DESCRIBE, host="10.0.0.1"), entry("User:alice", Op.ALL, host="10.0.0.1"),
            entry("User:bob", Op.DESCRIBE, host="10.0.0.1"), entry("User:bob", Op.ALL, host="10.0.0.1"),
            entry("User:eve", Op.DESCRIBE, DENY), entry("User:eve", Op.ALL, DENY)]
    assert filter_to_acls(args) == {TOPIC: acls, CLUSTER: acls, GROUP: acls}


def test_producer_expansion() -> None:
    """Write, Describe, Create on topics; Write, Describe on transactional ids; IdempotentWrite on the cluster."""
    args = parse("--add", "--producer", "--allow-principal", "User:p", "--topic", "orders", "--transactional-id",
                 "tx", "--idempotent")
    assert resource_to_acls(args) == {
        ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL): [
            entry("User:p", Op.WRITE), entry("User:p", Op.DESCRIBE), entry("User:p", Op.CREATE)],
        ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", PatternType.LITERAL): [
            entry("User:p", Op.WRITE), entry("User:p", Op.DESCRIBE)],
        ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL): [
            entry("User:p", Op.IDEMPOTENT_WRITE)]}
    # without --idempotent no cluster ACL, even with --cluster
    args = parse("--add", "--producer", "--allow-principal", "User:p", "--topic", "orders", "--cluster")
    assert list(filter_to_acls(args)) == [TOPIC]


def test_consumer_expansion_and_both_roles() -> None:
    args = parse("--add", "--consumer", "--allow-principal", "User:c", "--topic", "orders", "--group", "app")
    assert filter_to_acls(args) == {TOPIC: [entry("User:c", Op.READ), entry("User:c", Op.DESCRIBE)],
                                    GROUP: [entry("User:c", Op.READ)]}
    args = parse("--add", "--producer", "--consumer", "--allow-principal", "User:x", "--topic", "orders", "--group",
                 "app")
    assert filter_to_acls(args) == {
        TOPIC: [entry("User:x", Op.READ), entry("User:x", Op.DESCRIBE), entry("User:x", Op.WRITE),
                entry("User:x", Op.CREATE)],
        GROUP: [entry("User:x", Op.READ)]}


def test_prefixed_resources_and_the_cluster() -> None:
    args = parse("--add", "--allow-principal", "User:a", "--topic", "ord", "--cluster", "--resource-pattern-type",
                 "Prefixed")
    assert resource_filters(args) == [ResourcePatternFilter(ResourceType.TOPIC, "ord", PatternType.PREFIXED)]
    assert list(resource_to_acls(args)) == [ResourcePattern(ResourceType.TOPIC, "ord", PatternType.PREFIXED)]
    args = parse("--list", "--topic", "ord", "--resource-pattern-type", "match")
    assert resource_filters(args) == [ResourcePatternFilter(ResourceType.TOPIC, "ord", PatternType.MATCH)]


def test_the_text_acl_command_prints() -> None:
    pattern = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
    entries = [entry("User:alice", Op.READ), entry("User:bob", Op.WRITE, DENY, "10.0.0.1")]
    assert adding_text(pattern, entries) == (
        "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY) \n")
    assert current_text(pattern, entries[:1]) == (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--topic", "t"], "Command must include exactly one action: --list, --add, --remove. "),
    (["--add", "--list", "--topic", "t"], "Command must include exactly one action"),
    (["--list", "--producer"], 'Option "[list]" can\'t be used with option "[producer]"'),
    (["--list", "--allow-principal", "User:a"], 'Option "[list]" can\'t be used with option "[allow-principal]"'),
    (["--add", "--producer", "--topic", "t", "--operation", "Read"],
     'Option "[producer]" can\'t be used with option "[operation]"'),
    (["--add", "--consumer", "--topic", "t", "--group", "g", "--deny-principal", "User:a"],
     'Option "[consumer]" can\'t be used with option "[deny-principal]"'),
    (["--add", "--topic", "t", "--principal", "User:a"], "The --principal option is only available if --list is set"),
    (["--add", "--producer", "--group", "g"], "With --producer you must specify a --topic"),
    (["--add", "--idempotent", "--topic", "t"], "The --idempotent option is only available if --producer is set"),
    (["--add", "--consumer", "--topic", "t"], "With --consumer you must specify a --topic and a --group"),
    (["--add", "--consumer", "--topic", "t", "--group", "g", "--cluster"],
     "and no --cluster or --transactional-id option should be specified."),
    (["--add", "--allow-principal", "User:a"], "You must provide at least one resource: --topic <topic> or --cluster"),
    (["--add", "--topic", "t"],
     "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."),
    (["--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "match"],
     "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
    (["--list", "--resource-pattern-type", "regex"], "Unknown resource-pattern-type: regex"),
    (["--add", "--group", "g", "--allow-principal", "User:a", "--operation", "Write"],
     "ResourceType GROUP only supports operations ALL,READ,DELETE,DESCRIBE"),
    (["--add", "--topic", "t", "--allow-principal", "User:a", "--operation", "Fly"],
     "ResourceType TOPIC only supports operations ALL,READ,WRITE,CREATE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,"
     "ALTER_CONFIGS"),
])
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["acls", *ZK, *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_usage_errors_about_the_way_in(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["acls", "--list"])
    assert 'Missing required argument "[authorizer-properties]"' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["acls", "--list", "--bootstrap-server", "h:1", *ZK])
    assert "The --authorizer-properties option can only be used with --authorizer option" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["acls", "--list", "--command-config", "x", *ZK])
    assert "The --command-config option can only be used with --bootstrap-server option" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--authorizer-properties", "zookeeper.session.timeout.ms=6000", "--list"],
     'Error while executing ACL command: Missing required configuration "zookeeper.connect" which has no default '
     "value."),
    ([*ZK, "--add", "--topic", "t", "--allow-principal", "alice"],
     "Error while executing ACL command: expected a string in format principalType:principalName but got alice"),
    (["--bootstrap-server", "127.0.0.1:1", "--list", "--delegation-token", "tok"],
     "Error while executing ACL command: ACLs on a DelegationToken resource (librdkafka has no such resource type): "
     "kactor acls --bootstrap-server uses librdkafka (confluent-kafka), which cannot do that"),
    ([*ZK, "--authorizer", "com.example.Mine", "--list"], "Error while executing ACL command: kactor has only "
     "kafka.security.authorizer.AclAuthorizer, not com.example.Mine"),
])
def test_failures_before_zookeeper(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["acls", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"kactor acls: {message}") and err.count("\n") == 1, err


def test_an_unreachable_zookeeper_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["acls", *ZK, "--list", "--connect-timeout", "0.5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kactor acls: Timed out waiting for connection to ZooKeeper at 127.0.0.1:1")
    assert err.count("\n") == 1
