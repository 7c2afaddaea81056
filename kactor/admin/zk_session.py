"""A tool's ZooKeeper session, as Kafka's ZooKeeper tools open theirs (TopicCommand, ConfigCommand: a KafkaZkClient
with ``JaasUtils.isZkSecurityEnabled``): with the login the environment names (a digest in ``KACTOR_ZOOKEEPER_DIGEST``,
the JAAS file of ``KAFKA_OPTS``), failing in one line when no server answers. What a tool does over it is
`zk_bridge.admin.admin_zk.AdminZkClient`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError, KazooException
from kazoo.handlers.threading import KazooTimeoutError

from core.security.jaas import ZkSaslLogin
from zk_bridge.admin import IllegalArgumentException, ZooKeeperUnreachable
from zk_bridge.admin.admin_zk import DEFAULT_CONNECT_TIMEOUT_S, SESSION_TIMEOUT_S
from zk_bridge.executor import session_options, start_session

# ``user:password``: the tools' ZooKeeper digest login (the broker's is kactor.zookeeper.digest); an environment
# variable, not an option, so that the password is not on a command line for `ps` to show
ZOOKEEPER_DIGEST_ENV = "KACTOR_ZOOKEEPER_DIGEST"


def zookeeper_sasl_login(environ: Mapping[str, str] | None = None) -> ZkSaslLogin | None:
    """A tool's ZooKeeper SASL login, as Kafka's tools take it: the broker's (kactor.config
    .zookeeper_sasl_from_environment: the JAAS file ``-Djava.security.auth.login.config`` in ``KAFKA_OPTS`` names, its
    ``Client`` section or ``-Dzookeeper.sasl.clientconfig``'s). A file kactor cannot log in with is one line
    (IllegalArgumentException)."""
    from kactor.config import ConfigError, zookeeper_sasl_from_environment

    try:
        return zookeeper_sasl_from_environment(environ)
    except ConfigError as e:
        raise IllegalArgumentException(str(e)) from None


@contextlib.contextmanager
def zk_session(connect: str, timeout: float = DEFAULT_CONNECT_TIMEOUT_S) -> Iterator[KazooClient]:
    """A started KazooClient on ``connect`` (``host:port[,host:port...][/chroot]``), stopped and closed on exit.

    Raises ZooKeeperUnreachable (one line) when no server answers within ``timeout`` seconds. kazoo's own
    connection-retry warnings are silenced: a CLI prints one line, not a log.
    """
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
    # Kafka's tools create secure znodes when a ZooKeeper login is configured (JaasUtils.isZkSecurityEnabled: a JAAS
    # Client section named in KAFKA_OPTS); a kactor tool does so too, and when it is given the brokers' digest.
    digest = os.environ.get(ZOOKEEPER_DIGEST_ENV) or None
    sasl = zookeeper_sasl_login()
    try:
        client = KazooClient(hosts=connect, timeout=SESSION_TIMEOUT_S,
                             **session_options(digest, set_acl=digest is not None or sasl is not None, sasl=sasl))
    except (ValueError, TypeError, KazooException) as e:
        raise ZooKeeperUnreachable(f"Invalid ZooKeeper connect string {connect!r}: {e}") from None
    try:
        start_session(client, timeout, sasl=sasl is not None)
    except AuthFailedError:
        client.stop()
        client.close()
        raise ZooKeeperUnreachable(
            f"ZooKeeper at {connect} refused the SASL login of {sasl.username if sasl else ''!r} from "
            f"{sasl.path if sasl else ''} (Auth failed)") from None
    except (KazooTimeoutError, KazooException, OSError) as e:
        client.stop()
        client.close()
        detail = "" if isinstance(e, KazooTimeoutError) else f" ({type(e).__name__}: {e})"
        raise ZooKeeperUnreachable(
            f"Timed out waiting for connection to ZooKeeper at {connect} after {timeout:g} s{detail}") from None
    try:
        yield client
    finally:
        client.stop()
        client.close()


