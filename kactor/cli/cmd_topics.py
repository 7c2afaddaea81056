"""``kactor topics``: the twin of Kafka 2.6's ``kafka-topics.sh`` (kafka.admin.TopicCommand): ``--zookeeper`` writes
Kafka's ZooKeeper layout directly (ZookeeperTopicService), ``--bootstrap-server`` goes through the Kafka admin API
(AdminClientTopicService, kactor/cli/topics_kafka.py)."""

from __future__ import annotations

import argparse

from core.broker import log_config
from kactor.admin import topics
from kactor.cli import kafka_options, topics_kafka
from kactor.cli.kafka_support import (
    BROKER_CONFIGS_ADMIN_CONFIG,
    add_bootstrap_args,
    add_client_config_arg,
    check_client_config,
    kafka_errors,
    servers,
)
from kactor.cli.support import add_zookeeper_args, admin_client, admin_errors, printer, usage_error
from zk_bridge.admin.admin_zk import RACK_AWARE_DISABLED, RACK_AWARE_ENFORCED
from zk_bridge.admin.assignment import parse_replica_assignment

ACTIONS = ("create", "delete", "list", "describe", "alter")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "topics",
        description="This tool helps to create, delete, describe, or change a topic. With --zookeeper it writes "
                    "Kafka 2.6's ZooKeeper layout directly, as kafka-topics.sh --zookeeper does; with "
                    "--bootstrap-server it asks the brokers through the Kafka admin API.")
    add_zookeeper_args(p, required=False)
    add_bootstrap_args(p, required=False)
    add_client_config_arg(p, "--command-config", BROKER_CONFIGS_ADMIN_CONFIG)
    act = p.add_mutually_exclusive_group(required=True)
    act.add_argument("--create", action="store_true", help="Create a new topic.")
    act.add_argument("--delete", action="store_true", help="Delete a topic (marks it for deletion).")
    act.add_argument("--list", action="store_true", help="List all available topics.")
    act.add_argument("--describe", action="store_true", help="List details for the given topics.")
    act.add_argument("--alter", action="store_true",
                     help="Alter the number of partitions, replica assignment, and/or configuration for the topic.")
    p.add_argument("--topic", help="The topic to create, alter, describe or delete. It also accepts a regular "
                                   "expression, except for --create.")
    p.add_argument("--partitions", type=int, metavar="N",
                   help="The number of partitions for the topic being created or altered.")
    p.add_argument("--replication-factor", type=int, metavar="R",
                   help="The replication factor for each partition in the topic being created.")
    p.add_argument("--replica-assignment", metavar="B1:B2,B1:B2,...",
                   help="A list of manual partition-to-broker assignments for the topic being created or altered.")
    p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                   help="A topic configuration override for the topic being created or altered (repeatable). "
                        "Valid names: " + ", ".join(log_config.CONFIG_NAMES))
    p.add_argument("--delete-config", action="append", default=[], metavar="NAME",
                   help="A topic configuration override to be removed for an existing topic (repeatable).")
    p.add_argument("--if-not-exists", action="store_true",
                   help="if set when creating topics, the action will only execute if the topic does not exist.")
    p.add_argument("--if-exists", action="store_true",
                   help="if set when altering, deleting or describing topics, the action will only execute if the "
                        "topic exists.")
    p.add_argument("--under-replicated-partitions", action="store_true",
                   help="if set when describing topics, only show under replicated partitions")
    p.add_argument("--unavailable-partitions", action="store_true",
                   help="if set when describing topics, only show partitions whose leader is not available")
    p.add_argument("--under-min-isr-partitions", action="store_true",
                   help="if set when describing topics, only show partitions whose isr count is less than the "
                        "configured minimum. Not supported with the --zookeeper option.")
    p.add_argument("--at-min-isr-partitions", action="store_true",
                   help="if set when describing topics, only show partitions whose isr count is equal to the "
                        "configured minimum. Not supported with the --zookeeper option.")
    p.add_argument("--topics-with-overrides", action="store_true",
                   help="if set when describing topics, only show topics that have overridden configs")
    p.add_argument("--exclude-internal", action="store_true",
                   help="exclude internal topics when running list or describe command.")
    p.add_argument("--disable-rack-aware", action="store_true", help="Disable rack aware replica assignment")
    p.add_argument("--force", action="store_true", help="Suppress console prompts")  # 2.6.3 takes it, uses it not
    # AdminUtils' fixedStartIndex: makes placement deterministic (tests, reproducible demos).
    p.add_argument("--start-index", type=int, default=-1, help=argparse.SUPPRESS)
    kafka_options.add_refusals(p, "topics")
    p.set_defaults(func=run, _parser=p)


def _check_args(args: argparse.Namespace) -> str:
    """TopicCommandOptions.checkArgs: which options go with which action. Returns the action."""
    action = next(a for a in ACTIONS if getattr(args, a))
    if (args.zookeeper is None) == (args.bootstrap_server is None):
        usage_error(args, "exactly one of --zookeeper and --bootstrap-server is required")
    if args.bootstrap_server is not None:
        if args.alter and (args.config or args.delete_config):
            usage_error(args, "option --config/--delete-config can't be used with --alter and --bootstrap-server "
                              "(use kactor configs)")
        if args.disable_rack_aware or args.start_index != -1:
            usage_error(args, "option --disable-rack-aware can't be used with --bootstrap-server")
    only = {
        "partitions": {"create", "alter"}, "replication_factor": {"create"}, "replica_assignment": {"create", "alter"},
        "config": {"create", "alter"}, "delete_config": {"alter"}, "if_not_exists": {"create"},
        "if_exists": {"alter", "delete", "describe"}, "under_replicated_partitions": {"describe"},
        "unavailable_partitions": {"describe"}, "topics_with_overrides": {"describe"},
        "under_min_isr_partitions": {"describe"}, "at_min_isr_partitions": {"describe"},
        "exclude_internal": {"list", "describe"}, "disable_rack_aware": {"create"},
    }
    for dest, allowed in only.items():
        if getattr(args, dest) not in (None, False, []) and action not in allowed:
            usage_error(args, f"option --{dest.replace('_', '-')} can't be used with --{action}")
    if action not in ("list", "describe") and not args.topic:
        usage_error(args, f"--{action} requires --topic")
    if action == "describe" and args.if_exists and not args.topic:
        usage_error(args, "--if-exists with --describe requires --topic")
    for report in ("under_min_isr_partitions", "at_min_isr_partitions"):
        if getattr(args, report) and args.zookeeper is not None:  # 2.6.3: "Not supported with the --zookeeper"
            usage_error(args, f"option --{report.replace('_', '-')} can't be used with --zookeeper")
    reports = [o for o in ("under_replicated_partitions", "unavailable_partitions", "under_min_isr_partitions",
                           "at_min_isr_partitions", "topics_with_overrides") if getattr(args, o)]
    if len(reports) > 1:
        usage_error(args, "only one of --under-replicated-partitions, --unavailable-partitions, "
                          "--under-min-isr-partitions, --at-min-isr-partitions and --topics-with-overrides may be "
                          "given")
    if action == "create":
        if args.replica_assignment is not None:
            if args.partitions is not None or args.replication_factor is not None:
                usage_error(args, "option --replica-assignment can't be used with --partitions or "
                                  "--replication-factor")
        elif (args.partitions is None or args.replication_factor is None) and args.bootstrap_server is None:
            usage_error(args, "--create requires --partitions and --replication-factor (or --replica-assignment)")
    if action == "alter":
        if args.partitions is None and not args.config and not args.delete_config:
            usage_error(args, "--alter requires --partitions, --config or --delete-config")
        if args.replica_assignment is not None and args.partitions is None:
            usage_error(args, "--replica-assignment with --alter requires --partitions")
    return action


def run(args: argparse.Namespace) -> int:
    action = _check_args(args)
    check_client_config(args)
    out = printer()
    with admin_errors():
        assignment = parse_replica_assignment(args.replica_assignment) if args.replica_assignment else None
        config = topics.parse_configs_to_add(args.config)
    if args.bootstrap_server is not None:
        return run_kafka(args, action, assignment, config)
    rack_mode = RACK_AWARE_DISABLED if args.disable_rack_aware else RACK_AWARE_ENFORCED
    with admin_client(args) as admin:
        if action == "create":
            topics.create_topic(admin, out, args.topic, partitions=args.partitions,
                                replication_factor=args.replication_factor, replica_assignment=assignment,
                                config=config, if_not_exists=args.if_not_exists, rack_aware_mode=rack_mode,
                                fixed_start_index=args.start_index)
        elif action == "list":
            topics.list_topics(admin, out, args.topic, args.exclude_internal)
        elif action == "describe":
            topics.describe_topics(admin, out, args.topic, under_replicated=args.under_replicated_partitions,
                                   unavailable=args.unavailable_partitions,
                                   with_overrides=args.topics_with_overrides,
                                   exclude_internal=args.exclude_internal, if_exists=args.if_exists)
        elif action == "delete":
            topics.delete_topic(admin, out, args.topic, args.if_exists)
        else:
            topics.alter_topic(admin, out, args.topic, partitions=args.partitions, replica_assignment=assignment,
                               config=config, delete_config=args.delete_config, if_exists=args.if_exists)
    return 0


def run_kafka(args: argparse.Namespace, action: str, assignment: dict[int, list[int]] | None,
              config: dict[str, str]) -> int:
    """The --bootstrap-server form: AdminClientTopicService."""
    from kactor import kafka_clients

    target = servers(args)
    bootstrap = target.bootstrap
    out = printer()
    with kafka_errors(), admin_errors():
        admin = kafka_clients.admin_client(bootstrap, "kactor-topics", target.librdkafka())
        if action == "create":
            topics_kafka.create_topic(admin, out, args.topic, partitions=args.partitions,
                                      replication_factor=args.replication_factor, replica_assignment=assignment,
                                      config=config, if_not_exists=args.if_not_exists)
        elif action == "list":
            for t in topics_kafka.get_topics(admin, bootstrap, args.topic, args.exclude_internal):
                out(t)
        elif action == "describe":
            topics_kafka.describe_topics(admin, out, bootstrap, args.topic,
                                         under_replicated=args.under_replicated_partitions,
                                         unavailable=args.unavailable_partitions,
                                         with_overrides=args.topics_with_overrides,
                                         exclude_internal=args.exclude_internal, if_exists=args.if_exists,
                                         under_min_isr=args.under_min_isr_partitions,
                                         at_min_isr=args.at_min_isr_partitions)
        elif action == "delete":
            topics_kafka.delete_topics(admin, bootstrap, args.topic, args.if_exists)
        else:
            topics_kafka.add_partitions(admin, bootstrap, args.topic, args.partitions, assignment, args.if_exists)
    return 0
