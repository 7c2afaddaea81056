"""``kactor leader-election``: Kafka 2.6.3's ``kafka-leader-election.sh`` (kafka.admin.LeaderElectionCommand).

One ElectLeaders request (through confluent-kafka's AdminClient, which sends it to the controller) for the partitions
of ``--path-to-json-file``, one ``--topic``/``--partition``, or every partition (``--all-topic-partitions``: the
request names none, and the broker leaves out of its answer the partitions whose leader is already the right one).
Prints what 2.6's tool prints: one line for the partitions elected, one for those whose leader already was the one
the election would choose ("Valid replica already elected for partitions ...": ElectionNotNeededException is no
failure, exit 0), one per partition that failed with the exception Kafka's client makes of its error, then
"N replica(s) could not be elected" (exit 1).

The option checks are joptsimple's in 2.6 (``required``, ``requiredIf``, ``requiredUnless``, ``availableUnless``,
the election type's EnumConverter) with their messages; Kafka's tool dies of the exception, exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from kactor.admin import preferred
from kactor.cli import CliError
from kactor.cli.kafka_support import add_client_config_arg, java_exception, kafka_errors, servers
from kactor.cli.support import admin_errors, read_text_file
from kactor.kafka_clients import admin_client, cluster_metadata, error_text
from messages.common import Errors

TIMEOUT_S = 30.0  # LeaderElectionCommand.main: run(args, 30.second), the admin client's request timeout
ELECTION_TYPES = ("PREFERRED", "UNCLEAN")  # org.apache.kafka.common.ElectionType, as Java prints it
ELECTION_NOT_NEEDED = int(Errors.ELECTION_NOT_NEEDED)  # ElectionNotNeededException: a noop to the tool


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "leader-election",
        description="This tool attempts to elect a new leader from a set of topic partitions. The type of "
                    "elections supported are preferred replicas and unclean replicas.")
    p.add_argument("--bootstrap-server", metavar="host:port",
                   help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma "
                        "separated URLs can be given. REQUIRED.")
    add_client_config_arg(p, "--admin.config", "Configuration properties files to pass to the admin client")
    p.add_argument("--path-to-json-file", metavar="FILE",
                   help='The JSON file with the list of partition for which leader elections should be performed: '
                        '{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}. '
                        "Not allowed if --all-topic-partitions or --topic flags are specified.")
    p.add_argument("--topic", metavar="TOPIC",
                   help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
                        "--all-topic-partitions is specified.")
    p.add_argument("--partition", metavar="ID",
                   help="Partition id for which to perform an election. REQUIRED if --topic is specified.")
    p.add_argument("--all-topic-partitions", action="store_true",
                   help="Perform election on all of the topic partitions. Not allowed if --topic or "
                        "--path-to-json-file is specified.")
    p.add_argument("--election-type", metavar="TYPE",
                   help='Type of election to attempt. Possible values are "preferred" for preferred leader election '
                        'or "unclean" for unclean leader election. REQUIRED.')
    p.set_defaults(func=run, _parser=p)


def check_options(args: argparse.Namespace) -> tuple[str, int | None]:
    """LeaderElectionCommandOptions' joptsimple rules, in the order its parser applies them: (election type,
    partition). A violation raises CliError with joptsimple's message (exit 1)."""
    missing = [name for name, value in (("bootstrap-server", args.bootstrap_server),
                                        ("election-type", args.election_type)) if value is None]
    if args.topic is not None and args.partition is None:
        missing.append("partition")
    if not args.all_topic_partitions and args.path_to_json_file is None and args.topic is None:
        missing.append("all-topic-partitions")
    if missing:
        raise CliError(f"Missing required option(s) [{', '.join(missing)}]")
    unavailable = [name for name, given in (
        ("topic", args.topic is not None and (args.path_to_json_file is not None or args.all_topic_partitions)),
        ("all-topic-partitions", args.all_topic_partitions and args.path_to_json_file is not None))
        if given]
    if unavailable:  # 2.6 lets --all-topic-partitions through with --json-file and uses the file: refused here
        raise CliError(f"Option(s) [{', '.join(unavailable)}] are unavailable given other options on the command "
                       "line")
    election = args.election_type.upper()
    if election not in ELECTION_TYPES:
        raise CliError(f"Cannot parse argument '{args.election_type}' of option election-type")
    partition = None
    if args.partition is not None:
        try:
            partition = int(args.partition)
        except ValueError:
            raise CliError(f"Cannot parse argument '{args.partition}' of option partition") from None
    return election, partition


def run(args: argparse.Namespace) -> int:
    election, partition = check_options(args)
    target = servers(args)
    partitions: set[tuple[str, int]] | None = None
    if args.path_to_json_file is not None:
        text = read_text_file(args.path_to_json_file, "replica election JSON file")
        with admin_errors():
            partitions = {(tp.topic, tp.partition) for tp in preferred.parse_replica_election_data(text)}
    elif args.topic is not None:
        assert partition is not None
        partitions = {(args.topic, partition)}
    with kafka_errors():
        admin = admin_client(target.bootstrap, "kactor-leader-election",
                             target.librdkafka({"socket.timeout.ms": int(TIMEOUT_S * 1000)}))
        cluster_metadata(admin, target.bootstrap, TIMEOUT_S)
        results = elect_leaders(admin, election, partitions)
    lines, failed = outcome(election, results)
    for line in lines:
        print(line, flush=True)
    if failed:
        print(f"kactor leader-election: {failed} replica(s) could not be elected", file=sys.stderr)
        return 1
    return 0


def outcome(election: str, results: Mapping[tuple[str, int], Any]) -> tuple[list[str], int]:
    """The end of LeaderElectionCommand.electLeaders: each partition's answer (None, or the KafkaError) sorted into
    succeeded, noop (ElectionNotNeededException: the right leader leads already) and failed; the lines printed and
    how many failed (the AdminCommandFailedException's "N replica(s) could not be elected", exit 1)."""
    succeeded = sorted(tp for tp, error in results.items() if error is None)
    noop = sorted(tp for tp, error in results.items() if error is not None and error.code() == ELECTION_NOT_NEEDED)
    failed = sorted((tp, error) for tp, error in results.items()
                    if error is not None and error.code() != ELECTION_NOT_NEEDED)
    lines = []
    if succeeded:
        lines.append(f"Successfully completed leader election ({election}) for partitions "
                     + ", ".join(f"{t}-{p}" for t, p in succeeded))
    if noop:
        lines.append("Valid replica already elected for partitions " + ", ".join(f"{t}-{p}" for t, p in noop))
    for (t, p), error in failed:
        lines.append(f"Error completing leader election ({election}) for partition: {t}-{p}: "
                     f"{java_exception(error)}")
    return lines, len(failed)


def elect_leaders(admin: Any, election: str, partitions: set[tuple[str, int]] | None) -> dict[tuple[str, int],
                                                                                                Any]:
    """LeaderElectionCommand.electLeaders' request: AdminClient.electLeaders; each partition's answer, None or its
    KafkaError. A timeout is Kafka's "Timeout waiting for election results"."""
    from confluent_kafka import ElectionType, KafkaException, TopicPartition

    wanted = None if partitions is None else [TopicPartition(t, p) for t, p in sorted(partitions)]
    try:
        # the timeout is the client's socket.timeout.ms: confluent-kafka 2.16 refuses keyword arguments here
        answer = admin.elect_leaders(ElectionType[election], wanted).result(TIMEOUT_S + 5)
    except KafkaException as e:
        if e.args and getattr(e.args[0], "name", lambda: "")() in ("_TIMED_OUT", "REQUEST_TIMED_OUT"):
            print("Timeout waiting for election results", flush=True)
            raise CliError("Timeout waiting for election results") from None
        raise CliError(f"Error while making request: {error_text(e)}") from None
    return {(tp.topic, tp.partition): error for tp, error in answer.items()}
