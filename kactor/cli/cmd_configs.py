"""``kactor configs``: Kafka 2.6.3's ``kafka-configs.sh`` (kafka.admin.ConfigCommand). With ``--bootstrap-server``
through the admin API for topics, brokers, users and clients (kactor/cli/configs_kafka.py); with ``--zookeeper`` its
ZooKeeper path for topics, brokers and users (their SCRAM credentials, ConfigCommand.preProcessScramCredentials):
describe a config, or add / delete config entries and notify every broker
through ``/config/changes`` (kactor/admin/configs.py)."""

from __future__ import annotations

import argparse
import sys

from core.broker.log_config import CONFIG_NAMES
from core.quota.client_quota_manager import sanitize
from kactor.admin import configs
from kactor.cli import CliError, configs_kafka, kafka_options
from kactor.cli.kafka_support import (
    BROKER_CONFIGS_ADMIN_CONFIG,
    add_bootstrap_args,
    add_client_config_arg,
    check_client_config,
    servers,
)
from kactor.cli.support import add_zookeeper_args, admin_client, printer, read_text_file, usage_error
from zk_bridge.admin.admin_zk import BROKER_CONFIG_TYPE, DEFAULT_ENTITY, TOPIC_CONFIG_TYPE


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "configs",
        description="This tool helps to manipulate and describe entity config for a topic, client, user or broker. "
                    "--bootstrap-server goes through Kafka's admin API (DescribeConfigs, IncrementalAlterConfigs, "
                    "client quotas); --zookeeper writes Kafka 2.6's ZooKeeper layout directly (topics, brokers, and "
                    "users: their SCRAM credentials, 'SCRAM-SHA-256=[iterations=8192,password=...]').")
    add_bootstrap_args(p, required=False)
    add_client_config_arg(p, "--command-config", BROKER_CONFIGS_ADMIN_CONFIG)
    add_zookeeper_args(p, required=False)
    p.add_argument("--all", action="store_true",
                   help="List all configs for the given topic, broker, or broker-logger entity (includes static "
                        "configuration when the entity type is brokers). (--bootstrap-server)")
    p.add_argument("--user", metavar="USER", help="The user's principal name. (--bootstrap-server)")
    p.add_argument("--client", metavar="CLIENT", help="The client's ID. (--bootstrap-server)")
    p.add_argument("--user-defaults", action="store_true",
                   help="The config defaults for all users. (--bootstrap-server)")
    p.add_argument("--client-defaults", action="store_true",
                   help="The config defaults for all clients. (--bootstrap-server)")
    act = p.add_mutually_exclusive_group()
    act.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    act.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    p.add_argument("--entity-type", action="append", default=[], metavar="TYPE",
                   help="Type of entity (topics/clients/users/brokers/broker-loggers)")
    p.add_argument("--entity-name", action="append", default=[], metavar="NAME",
                   help="Name of entity (topic name/client id/user principal name/broker id)")
    p.add_argument("--entity-default", action="store_true",
                   help="Default entity name for brokers (applies to corresponding entity type in command line)")
    p.add_argument("--topic", metavar="TOPIC", help="The topic's name.")
    p.add_argument("--broker", metavar="ID", help="The broker's ID.")
    p.add_argument("--broker-defaults", action="store_true", help="The config defaults for all brokers.")
    p.add_argument("--broker-logger", metavar="ID", help="The broker's ID for its logger config.")
    p.add_argument("--add-config", metavar="K=V,...",
                   help="Key Value pairs of configs to add. Square brackets can be used to group values which "
                        "contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. For entity-type 'topics': "
                        + ", ".join(CONFIG_NAMES))
    p.add_argument("--add-config-file", metavar="FILE",
                   help="Path to a properties file with configs to add. See add-config for a list of valid "
                        "configurations.")
    p.add_argument("--delete-config", action="append", default=[], metavar="K1,K2",
                   help="config keys to remove 'k1,k2'")
    p.add_argument("--force", action="store_true", help="Suppress console prompts")
    kafka_options.add_refusals(p, "configs")
    p.set_defaults(func=run, _parser=p)


def entity_of(args: argparse.Namespace) -> configs.Entity:
    """The --zookeeper path's one entity (`entities`, as a configs.Entity)."""
    types, names = entities(args)
    name = names[0] if names else None
    if name and types[0] == "users":  # ConfigCommand.parseClientQuotaEntity's Sanitizer.sanitize
        name = sanitize(name)
    return configs.Entity(types[0], DEFAULT_ENTITY if name == "" else name)


def entities(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """ConfigCommandOptions.checkArgs: the entity types and names the command is about. IllegalArgumentException
    cases become one CliError line (exit 1), as ConfigCommand prints them."""
    by_server = args.bootstrap_server is not None
    if not args.alter and not args.describe:
        usage_error(args, "Command must include exactly one action: --describe, --alter")
    if args.describe:
        for dest in ("add_config", "delete_config"):
            if getattr(args, dest) not in (None, []):
                usage_error(args, f"option --{dest.replace('_', '-')} can't be used with --describe")
    flags = [(args.topic, TOPIC_CONFIG_TYPE), (args.client, "clients"), (args.user, "users"),
             (args.broker, BROKER_CONFIG_TYPE), (args.broker_logger, "broker-loggers")]
    defaults_flags = [(args.client_defaults, "clients"), (args.user_defaults, "users"),
                      (args.broker_defaults, BROKER_CONFIG_TYPE)]
    types = list(args.entity_type) + [t for v, t in flags if v is not None] + [t for v, t in defaults_flags if v]
    dupes = sorted({t for t in types if types.count(t) > 1})
    if dupes:
        raise CliError(f"Duplicate entity type(s) specified: {','.join(dupes)}")
    allowed, connect = (configs_kafka.ENTITY_TYPES, "--bootstrap-server") if by_server else (configs.ENTITY_TYPES,
                                                                                             "--zookeeper")
    for t in types:
        if t not in allowed:
            raise CliError(f"Invalid entity type {t}, the entity type must be one of {','.join(allowed)} with the "
                           f"{connect} argument")
    if not types:
        raise CliError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise CliError("Only 'users' and 'clients' entity types may be specified together")
    if (args.entity_name or args.entity_type or args.entity_default) and \
            (any(v is not None for v, _ in flags) or any(v for v, _ in defaults_flags)):
        raise CliError("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
    names = list(args.entity_name) + ([""] if args.entity_default else []) + \
        [v for v, _ in flags if v is not None] + ["" for v, _ in defaults_flags if v]
    if args.zookeeper is None and not by_server:
        raise CliError("One of the required --bootstrap-server or --zookeeper arguments must be specified")
    if args.zookeeper is not None and by_server:
        raise CliError("Only one of --bootstrap-server or --zookeeper must be specified")
    if args.all and not by_server:
        raise CliError("--bootstrap-server must be specified for --all")
    if args.all and args.alter:
        raise CliError('Option "[all]" can\'t be used with option "[alter]"')
    entity_type = types[0]
    if entity_type in (BROKER_CONFIG_TYPE, "broker-loggers"):
        for name in names:
            if name and not _is_int(name):
                raise CliError(f"The entity name for {entity_type} must be a valid integer broker id, but it is: "
                               f"{name}")
    if args.describe and entity_type == "broker-loggers" and not any(names):
        raise CliError(f"an entity name must be specified with --describe of {','.join(types)}")
    if args.alter:
        if entity_type in (BROKER_CONFIG_TYPE, "users", "clients"):
            if not names:
                raise CliError("an entity-name or default entity must be specified with --alter of users, clients "
                               "or brokers")
        elif not any(names):
            raise CliError(f"an entity name must be specified with --alter of {','.join(types)}")
        if args.add_config is not None and args.add_config_file is not None:
            raise CliError("Only one of --add-config or --add-config-file must be specified")
        if args.add_config is None and args.add_config_file is None and not args.delete_config:
            raise CliError("At least one of --add-config, --add-config-file, or --delete-config must be specified "
                           "with --alter")
    return types, names


def _is_int(text: str) -> bool:
    """Java's Integer.parseInt (via Scala's toInt): an optional sign and decimal digits, in the int range."""
    try:
        value = int(text)
    except ValueError:
        return False
    return text.strip() == text and "_" not in text and -(2**31) <= value < 2**31


def add_config_of_file(path: str) -> str:
    """ConfigCommand.parseConfigsToBeAdded's --add-config-file (Utils.loadProps) as the --add-config text that
    parses back to the file's values: each value in [] so that its commas and '=' stay in it (a value holding '['
    or ']' itself is passed as it stands, and loses them as an --add-config value would)."""
    from kactor.config import ConfigError, parse_properties

    try:
        props = parse_properties(read_text_file(path, "--add-config-file"), path)
    except ConfigError as e:
        raise CliError(str(e)) from None
    return ",".join(f"{k}={v}" if "[" in v or "]" in v else f"{k}=[{v}]" for k, v in props.items())


def run(args: argparse.Namespace) -> int:
    check_client_config(args)
    if args.alter and args.add_config_file is not None and args.add_config is None:
        entities(args)  # its checks first, as ConfigCommandOptions.checkArgs runs before the file is read
        args.add_config = add_config_of_file(args.add_config_file) or None
        args.add_config_file = None
    if args.bootstrap_server is not None:
        types, names = entities(args)
        argv = " ".join(sys.argv[2:]) if len(sys.argv) > 2 else ""
        return configs_kafka.run(argv, servers(args), args.alter, types, names, args.add_config,
                                 args.delete_config, args.all)
    entity = entity_of(args)
    out = printer()
    with admin_client(args) as admin:
        if args.alter:
            configs.alter_config(admin, out, entity, args.add_config, args.delete_config)
        else:
            configs.describe_config(admin, out, entity)
    return 0
