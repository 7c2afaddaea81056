"""``kactor reassign-partitions``: Kafka 2.6.3's ``kafka-reassign-partitions.sh`` (ReassignPartitionsCommand) — with
``--bootstrap-server`` through the admin API (kactor/cli/reassign_kafka.py: --generate, --execute [--throttle],
--verify, --list, --cancel), with ``--zookeeper`` its legacy ZooKeeper path (kactor/admin/reassign.py)."""

from __future__ import annotations

import argparse
import sys

from kactor.admin import reassign
from kactor.cli import CliError, reassign_kafka
from kactor.cli.kafka_support import add_bootstrap_args, add_client_config_arg, check_client_config, servers
from kactor.cli.support import (
    add_zookeeper_args,
    admin_client,
    admin_errors,
    printer,
    read_text_file,
    usage_error,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reassign-partitions",
        description="This tool helps to move topic partitions between replicas: --generate a proposal, --execute "
                    "it, --verify its progress; with --bootstrap-server also --list and --cancel. --bootstrap-server "
                    "goes through Kafka's admin API (AlterPartitionReassignments); --zookeeper writes "
                    "/admin/reassign_partitions, as 2.6's deprecated path.")
    add_bootstrap_args(p, required=False)
    add_client_config_arg(p)
    add_zookeeper_args(p, required=False)
    act = p
    act.add_argument("--generate", action="store_true",
                     help="Generate a candidate partition reassignment configuration (writes nothing).")
    act.add_argument("--execute", action="store_true",
                     help="Kick off the reassignment as specified by the --reassignment-json-file option.")
    act.add_argument("--verify", action="store_true",
                     help="Verify if the reassignment completed as specified by --reassignment-json-file.")
    act.add_argument("--list", action="store_true",
                     help="List all active partition reassignments. (--bootstrap-server)")
    act.add_argument("--cancel", action="store_true",
                     help="Cancel an active reassignment: the partitions of --reassignment-json-file go back to their "
                          "replicas before it started. (--bootstrap-server)")
    p.add_argument("--throttle", type=int, default=None, metavar="B/s",
                   help="The movement of partitions between brokers will be throttled to this value (bytes/sec); "
                        "--verify removes the throttle once the reassignment is done. (--execute, --bootstrap-server)")
    p.add_argument("--replica-alter-log-dirs-throttle", type=int, default=None, metavar="B/s",
                   help="The movement of replicas between log directories on the same broker will be throttled to "
                        "this value (bytes/sec); --verify removes the throttle once the reassignment is done. "
                        "(--execute, --bootstrap-server)")
    p.add_argument("--additional", action="store_true",
                   help="Execute this reassignment in addition to any other ongoing ones. (--bootstrap-server)")
    p.add_argument("--preserve-throttles", action="store_true",
                   help="Do not modify broker or topic throttles. (--verify, --cancel)")
    p.add_argument("--topics-to-move-json-file", metavar="FILE",
                   help='Generate a reassignment for these topics: {"topics":[{"topic":"foo"}],"version":1}')
    p.add_argument("--broker-list", metavar="0,1,2", help="The brokers to which the partitions are to be moved "
                                                          "(with --generate).")
    p.add_argument("--reassignment-json-file", metavar="FILE",
                   help='The reassignment: {"version":1,"partitions":[{"topic":"foo","partition":0,'
                        '"replicas":[1,2],"log_dirs":["any","any"]}]}')
    p.add_argument("--disable-rack-aware", action="store_true", help="Disable rack aware replica assignment")
    p.add_argument("--wait", action="store_true", help="with --verify: poll until every partition is done")
    # Kafka 2.6.3's --timeout is in ms (a Long): "Maximum time in ms to wait for log directory replica assignment to
    # begin." kactor's own --verify --wait takes it too, in ms as well.
    p.add_argument("--timeout", type=int, default=None, metavar="timeout",
                   help="Maximum time in ms to wait for log directory replica assignment to begin. (default: "
                        f"{int(reassign_kafka.MOVE_START_TIMEOUT_S * 1000)}; --execute, --cancel, --bootstrap-server) "
                        f"With --verify --wait: give up after this many ms (default: "
                        f"{int(reassign.DEFAULT_WAIT_TIMEOUT_S * 1000)}).")
    p.add_argument("--poll-interval", type=float, default=0.5, metavar="S", help=argparse.SUPPRESS)
    p.add_argument("--start-index", type=int, default=-1, help=argparse.SUPPRESS)
    p.set_defaults(func=run, _parser=p)


def run(args: argparse.Namespace) -> int:
    check_client_config(args)
    if args.bootstrap_server is not None:
        if args.zookeeper is not None:
            usage_error(args, "--zookeeper and --bootstrap-server can't be used together")
        given = {dest: getattr(args, dest) not in (None, False) for dest in reassign_kafka.OPTIONS}
        return reassign_kafka.run(args, servers(args), given.__getitem__)
    actions = [a for a in reassign_kafka.ACTIONS if getattr(args, a)]
    if len(actions) != 1:
        raise CliError("Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
    if args.zookeeper is None:
        raise CliError("Please specify --bootstrap-server")
    for dest in ("additional", "cancel", "list"):  # 2.6's bootstrapServerOnlyArgs
        if getattr(args, dest):
            raise CliError(f'You must specify --bootstrap-server when using "[{dest}]"')
    for dest in ("throttle", "replica_alter_log_dirs_throttle", "preserve_throttles"):  # 2.6's ZooKeeper path has them
        if getattr(args, dest) not in (None, False):
            raise CliError(f"--{dest.replace('_', '-')} needs --bootstrap-server: kactor's --zookeeper path writes "
                           "and clears no replication throttles")
    action = actions[0]
    allowed = {
        "generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware"},
        "execute": {"reassignment_json_file"},
        "verify": {"reassignment_json_file", "wait"},
    }[action]
    for dest in ("topics_to_move_json_file", "broker_list", "reassignment_json_file", "disable_rack_aware", "wait"):
        if getattr(args, dest) not in (None, False) and dest not in allowed:
            usage_error(args, f'option --{dest.replace("_", "-")} can\'t be used with --{action}')
    required = {"generate": ("topics_to_move_json_file", "broker_list")}.get(action, ("reassignment_json_file",))
    for dest in required:
        if getattr(args, dest) is None:
            usage_error(args, f"--{action} requires --{dest.replace('_', '-')}")
    if args.timeout is not None and args.timeout <= 0:
        usage_error(args, "--timeout must be positive")
    wait_timeout_s = reassign.DEFAULT_WAIT_TIMEOUT_S if args.timeout is None else args.timeout / 1000.0
    out = printer()
    if action == "generate":
        text = read_text_file(args.topics_to_move_json_file, "topics-to-move JSON file")
        with admin_errors():  # file format problems are reported before connecting
            reassign.parse_broker_list(args.broker_list)
            reassign.parse_topics_data(text)
        with admin_client(args) as admin:
            reassign.generate_assignment(admin, out, text, args.broker_list, not args.disable_rack_aware,
                                         args.start_index)
        return 0
    text = read_text_file(args.reassignment_json_file, "reassignment JSON file")
    if action == "execute":
        with admin_errors():
            reassign.parse_execute_assignment(text)
        with admin_client(args) as admin:
            reassign.execute_assignment(admin, out, text)
        return 0
    with admin_errors():
        reassign.parse_partition_reassignment_data(text)
    with admin_client(args) as admin:
        progress = (lambda line: print(line, file=sys.stderr, flush=True)) if args.wait else None
        reassign.verify_assignment(admin, out, text, wait=args.wait, timeout_s=wait_timeout_s,
                                   poll_s=args.poll_interval, progress=progress)
    return 0
