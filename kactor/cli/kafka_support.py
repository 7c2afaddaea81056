"""What the subcommands that talk Kafka's protocol share: ``--bootstrap-server`` with the client properties file
Kafka's tool takes beside it (``--command-config``, ``--admin.config``, ``--consumer.config``, ``--producer.config``),
``key=value`` property lists (``--property``, ``--producer-property``, ``--consumer-property``) and librdkafka's
failures as one CliError line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from kactor.cli import CliError, client_properties
from kactor.cli.client_properties import Servers
from kactor.cli.java_errors import java_exception_text
from kactor.cli.support import usage_error
from kactor.kafka_clients import KafkaClientError, error_text, parse_bootstrap


def add_bootstrap_args(parser: argparse.ArgumentParser, required: bool = True, note: str | None = None) -> None:
    """--bootstrap-server, as Kafka 2.6's tools take it; ``note`` says how it relates to the command's other options
    (by default, when optional: the Kafka-protocol alternative to --zookeeper)."""
    if note is None and not required:
        note = "instead of --zookeeper: through Kafka's protocol"
    parser.add_argument("--bootstrap-server", required=required, metavar="HOST:PORT",
                        help="the broker(s) to connect to first: host:port[,host:port...]"
                             + (f" ({note})" if note else ""))


def bootstrap(args: argparse.Namespace) -> str:
    """The validated --bootstrap-server value (a usage error, exit 2, when malformed)."""
    try:
        return parse_bootstrap(args.bootstrap_server)
    except ValueError as e:
        usage_error(args, f"--bootstrap-server: {e}")
        raise  # not reached: usage_error exits


LOGIN_CHECK_TIMEOUT_S = 10.0
# Kafka 2.6.3's help texts of the options
ADMIN_CLIENT_CONFIG = "Property file containing configs to be passed to Admin Client."
BROKER_CONFIGS_ADMIN_CONFIG = ("Property file containing configs to be passed to Admin Client. This is used only with "
                               "--bootstrap-server option for describing and altering broker configs.")


def add_client_config_arg(parser: argparse.ArgumentParser, option: str = "--command-config",
                          help_text: str = ADMIN_CLIENT_CONFIG) -> None:
    """The client properties file Kafka's tool takes with --bootstrap-server, under that tool's option name (its
    Java client's property names: security.protocol, sasl.*, ssl.*; kactor/cli/client_properties.py)."""
    parser.add_argument(option, dest="client_config", metavar="config file", help=help_text)
    parser.set_defaults(_client_config_option=option)


def servers(args: argparse.Namespace, same_name: Iterable[str] = ()) -> Servers:
    """The validated --bootstrap-server and how to connect to it: the client properties file given with it (a usage
    error without --bootstrap-server; a file that cannot be read, or a setting kactor's clients cannot honour, one
    CliError line)."""
    check_client_config(args)
    option = getattr(args, "_client_config_option", "--command-config")
    props = client_properties.load(getattr(args, "client_config", None), option,
                                   lambda line: print(line, file=sys.stderr), same_name=same_name)
    target = Servers(bootstrap(args), props)
    if props.protocol != "PLAINTEXT":
        # Kafka's clients fail at once on a refused login or an untrusted certificate; librdkafka retries them
        # until the tool's timeout, then reports a transport failure. So the file's login is tried once first.
        from kactor.cli import kafka_wire

        try:
            kafka_wire.check_login(target, LOGIN_CHECK_TIMEOUT_S)
        except kafka_wire.AuthenticationError as e:
            raise CliError(str(e)) from None
    return target


def check_client_config(args: argparse.Namespace) -> None:
    """The client properties file is for --bootstrap-server only (a usage error, exit 2, with --zookeeper)."""
    option = getattr(args, "_client_config_option", "--command-config")
    if getattr(args, "client_config", None) is not None and args.bootstrap_server is None:
        usage_error(args, f"The {option} option can only be used with --bootstrap-server option")


def parse_properties(args: argparse.Namespace, option: str, values: list[str] | None) -> dict[str, str]:
    """``key=value`` items (Kafka's CommandLineUtils.parseKeyValueArgs); a usage error names a malformed one."""
    props: dict[str, str] = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            usage_error(args, f"{option}: expected key=value, got {item!r}")
        props[key.strip()] = value
    return props


@contextmanager
def kafka_errors() -> Iterator[None]:
    """KafkaClientError, librdkafka's KafkaException and its configuration errors inside the block become one
    CliError line (exit 1)."""
    from confluent_kafka import KafkaException

    try:
        yield
    except KafkaClientError as e:
        raise CliError(str(e)) from None
    except KafkaException as e:
        raise CliError(error_text(e)) from None



def java_exception(error: Any) -> str:
    """A librdkafka KafkaError as Kafka's Java tools print the exception it becomes (``Throwable.toString``):
    ``org.apache.kafka.common.errors.ElectionNotNeededException: Leader election not needed for topic partition.``.
    librdkafka says "Broker: <its own description>" when the broker sent no message; Java then uses its default."""
    text = error.str()
    if error.code() == -185:  # librdkafka's _TIMED_OUT: Kafka's client times out the same way
        return java_exception_text(7, text)
    return java_exception_text(error.code(), None if text.startswith("Broker: ") else text)
