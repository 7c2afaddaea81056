"""``kactor preferred-replica-election``: Kafka 2.6's ``kafka-preferred-replica-election.sh``
(kafka.admin.PreferredReplicaLeaderElectionCommand): with ``--zookeeper`` its ZkCommand (the admin znode the
controller acts on), with ``--bootstrap-server [--admin.config FILE]`` its AdminClientCommand (ElectLeaders,
PREFERRED, through Kafka's protocol)."""

from __future__ import annotations

import argparse
import sys

from kactor.admin import preferred
from kactor.cli.kafka_support import add_client_config_arg, check_client_config, java_exception, kafka_errors, servers
from kactor.cli.support import add_zookeeper_args, admin_client, admin_errors, printer, read_text_file, usage_error


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "preferred-replica-election",
        description="Elects each partition's first replica as its leader, for the partitions in "
                    "--path-to-json-file or every partition of the cluster: with --zookeeper by writing "
                    "/admin/preferred_replica_election for the controller, with --bootstrap-server through the "
                    "brokers' ElectLeaders API.")
    add_zookeeper_args(p, required=False)
    p.add_argument("--bootstrap-server", metavar="host:port",
                   help="A hostname and port for the broker to connect to, in the form host:port. Multiple "
                        "comma-separated URLs can be given. REQUIRED unless --zookeeper is given.")
    add_client_config_arg(p, "--admin.config", "Admin client config properties file to pass to the admin client "
                                               "when --bootstrap-server is given.")
    p.add_argument("--path-to-json-file", metavar="FILE",
                   help='The partitions: {"partitions":[{"topic":"foo","partition":1}]}. '
                        "Defaults to all existing partitions.")
    p.set_defaults(func=run, _parser=p)


def run(args: argparse.Namespace) -> int:
    if (args.bootstrap_server is None) == (args.zookeeper is None):
        usage_error(args, "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided")
    check_client_config(args)
    partitions = None
    if args.path_to_json_file is not None:
        text = read_text_file(args.path_to_json_file, "preferred replica election JSON file")
        with admin_errors():
            partitions = preferred.parse_preferred_replica_election_data(text)
    if args.bootstrap_server is not None:
        return run_kafka(args, None if partitions is None else {(tp.topic, tp.partition) for tp in partitions})
    with admin_client(args) as admin:
        preferred.elect_preferred_leaders(admin, printer(), partitions)
    return 0


def run_kafka(args: argparse.Namespace, partitions: set[tuple[str, int]] | None) -> int:
    """AdminClientCommand.electPreferredLeaders: the elected partitions on one line, each failure on its own, and
    "N preferred replica(s) could not be elected" (exit 1) when any failed."""
    from kactor.cli.cmd_leader_election import TIMEOUT_S, elect_leaders
    from kactor.kafka_clients import admin_client as kafka_admin_client
    from kactor.kafka_clients import cluster_metadata

    target = servers(args)
    with kafka_errors():
        admin = kafka_admin_client(target.bootstrap, "kactor-preferred-replica-election",
                                   target.librdkafka({"socket.timeout.ms": int(TIMEOUT_S * 1000)}))
        cluster_metadata(admin, target.bootstrap, TIMEOUT_S)
        results = elect_leaders(admin, "PREFERRED", partitions)
    succeeded = sorted(tp for tp, error in results.items() if error is None)
    failed = sorted((tp, java_exception(error)) for tp, error in results.items() if error is not None)
    if succeeded:
        print("Successfully completed preferred replica election for partitions "
              + ", ".join(f"{t}-{p}" for t, p in succeeded), flush=True)
    for (t, p), error in failed:
        print(f"Error completing preferred replica election for partition {t}-{p}: {error}", flush=True)
    if failed:
        print(f"kactor preferred-replica-election: {len(failed)} preferred replica(s) could not be elected",
              file=sys.stderr)
        return 1
    return 0
