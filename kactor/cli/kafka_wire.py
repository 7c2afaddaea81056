"""Kafka requests the bundled client (librdkafka, through confluent-kafka) does not send, for the tools that need them:
ListPartitionReassignments, AlterPartitionReassignments, OffsetDelete, Describe/AlterClientQuotas. One request per
fresh connection, framed by ``protocol.framing`` at an explicit version, to the node Kafka's AdminClient would send it
to: the controller (found by Metadata) or a group's coordinator (found by FindCoordinator, retried while the
coordinator is loading or moving, as the AdminClient retries). A failure is one `KafkaClientError` line.

Each connection is made as the tool's client properties file says (kactor/cli/client_properties.py; a bare
``host:port`` list is PLAINTEXT): TLS with the file's context, checking the broker's name when
``ssl.endpoint.identification.algorithm=https``, then SASL as Kafka's SaslClientAuthenticator does it (SaslHandshake
v1, SaslAuthenticate until the mechanism is done: edges/net/sasl.py's ClientExchange over
core/security/sasl_client.py). A refused login is one line: "Authentication failed ...".
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from typing import Any

from core.security.sasl_client import SaslClient
from core.security.scram import SaslException
from kactor.cli.client_properties import PLAINTEXT, ClientProperties, Servers
from kactor.kafka_clients import KafkaClientError

Bootstrap = str | Servers  # a bare host:port list connects PLAINTEXT


class AuthenticationError(KafkaClientError):
    """The broker refused the login, or its certificate is not trusted (Kafka's SaslAuthenticationException,
    SslAuthenticationException): not a broker that is down, so not another bootstrap server's to try."""

CLIENT_ID = "kactor-admin"
METADATA = (3, 9)
FIND_COORDINATOR = (10, 2)
API_VERSIONS = (18, 2)
NO_TOPICS: dict[str, Any] = {"topics": [], "allow_auto_topic_creation": False,  # a Metadata v9 body: brokers only
                             "include_cluster_authorized_operations": False,
                             "include_topic_authorized_operations": False}
# FindCoordinator's and a group request's errors after which Kafka's AdminClient looks the coordinator up again
COORDINATOR_RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def exchange(address: tuple[str, int], api_key: int, version: int, body: dict[str, Any],
             timeout_s: float, props: ClientProperties = PLAINTEXT) -> dict[str, Any]:
    """One request on a fresh connection made as ``props`` say; the decoded response body, or KafkaClientError."""
    # imported here: the schemas cost a tool that never sends a request (a --zookeeper one) 0.4-0.8 s of CPU
    from protocol.framing import RequestHeader, decode_response, encode_request

    host, port = address
    try:
        with connect(address, props, timeout_s) as s:
            s.sendall(encode_request(RequestHeader(api_key, version, 1, CLIENT_ID), body))
            (size,) = struct.unpack(">i", recv_exact(s, 4))
            _, answer = decode_response(api_key, version, recv_exact(s, size))
            return answer
    except ssl.SSLCertVerificationError as e:
        raise AuthenticationError(f"SSL handshake with {host}:{port} failed: {e.verify_message or e}") from None
    except ssl.SSLError as e:
        raise KafkaClientError(f"SSL handshake with {host}:{port} failed: {e.reason or e}") from None
    except (OSError, ConnectionError) as e:
        raise KafkaClientError(f"request to {host}:{port} failed: {e.strerror or e}"
                               if isinstance(e, OSError) and e.strerror else
                               f"request to {host}:{port} failed: {e}") from None


def connect(address: tuple[str, int], props: ClientProperties, timeout_s: float) -> socket.socket:
    """A connection ready for requests: TCP, then TLS and SASL when ``props`` ask for them. OSError, ssl.SSLError
    or AuthenticationError (a refused login) when it cannot be made."""
    host, port = address
    s = socket.create_connection((host, port), timeout=timeout_s)
    try:
        if props.ssl_context is not None:
            s = props.ssl_context.wrap_socket(s, server_hostname=host)
        if props.sasl is not None:
            authenticate(s, SaslClient(props.sasl), f"{host}:{port}")
    except BaseException:
        s.close()
        raise
    return s


def authenticate(s: socket.socket, client: SaslClient, where: str) -> None:
    """SaslClientAuthenticator on a blocking socket: SaslHandshake v1, then SaslAuthenticate until done."""
    from edges.net.sasl import ClientExchange  # here for the same reason as exchange's imports

    sasl = ClientExchange(client)
    frame: bytes | None = sasl.handshake(0, CLIENT_ID)
    corr = 0
    try:
        while frame is not None:
            s.sendall(frame)
            (size,) = struct.unpack(">i", recv_exact(s, 4))
            corr += 1
            frame = sasl.on_response(recv_exact(s, size), corr, CLIENT_ID)
    except SaslException as e:
        raise AuthenticationError(f"Authentication failed with {where} ({client.config.mechanism}): {e}") from None


def recv_exact(s: socket.socket, n: int) -> bytes:
    """Exactly n bytes from a blocking socket; ConnectionError if the broker closes it first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        buf += chunk
    return buf


def servers_of(bootstrap: Bootstrap) -> Servers:
    """``bootstrap`` with how to connect to it (a bare host:port list: PLAINTEXT)."""
    return bootstrap if isinstance(bootstrap, Servers) else Servers(bootstrap)


def _bootstrap_addresses(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for entry in bootstrap.split(","):
        host, _, port = entry.rpartition(":")
        out.append((host.strip("[]"), int(port)))
    return out


def metadata(bootstrap: Bootstrap, timeout_s: float) -> dict[str, Any]:
    """A Metadata answer (no topics) from the first bootstrap server that answers. A refused login is not
    another server's to answer: it is the answer."""
    servers = servers_of(bootstrap)
    errors = []
    for address in _bootstrap_addresses(servers.bootstrap):
        try:
            return exchange(address, *METADATA, NO_TOPICS, timeout_s, servers.props)
        except AuthenticationError:
            raise
        except KafkaClientError as e:
            errors.append(str(e))
    raise KafkaClientError(f"no bootstrap server answered ({'; '.join(errors)}): is a broker listening there"
                           f"{' with ' + servers.props.protocol if servers.props.protocol != 'PLAINTEXT' else ''}?")


def check_login(bootstrap: Bootstrap, timeout_s: float) -> None:
    """Log in once to the first bootstrap server that takes a connection: AuthenticationError if it refuses the
    login or its certificate; nothing when none answers (the tool's own requests then say so)."""
    servers = servers_of(bootstrap)
    for address in _bootstrap_addresses(servers.bootstrap):
        try:
            exchange(address, *API_VERSIONS, {}, timeout_s, servers.props)
            return
        except AuthenticationError:
            raise
        except KafkaClientError:
            continue


def _node(meta: dict[str, Any], node_id: int) -> tuple[str, int]:
    for b in meta["brokers"]:
        if b["node_id"] == node_id:
            return b["host"], b["port"]
    raise KafkaClientError(f"broker {node_id} is not in the cluster's metadata")


def supports(bootstrap: Bootstrap, api_key: int, timeout_s: float) -> bool:
    """Whether the first bootstrap server that answers advertises ``api_key`` in ApiVersions. (Asked directly: a
    broker that has just started can answer Metadata before it knows the cluster's brokers.)"""
    servers = servers_of(bootstrap)
    errors = []
    for address in _bootstrap_addresses(servers.bootstrap):
        try:
            answer = exchange(address, *API_VERSIONS, {}, timeout_s, servers.props)
        except AuthenticationError:
            raise
        except (OSError, KafkaClientError) as e:
            errors.append(f"{address[0]}:{address[1]}: {e}")
            continue
        return any(k["api_key"] == api_key for k in answer["api_keys"])
    raise KafkaClientError("no bootstrap server answered ApiVersions: " + "; ".join(errors))


def controller_request(bootstrap: Bootstrap, api_key: int, version: int, body: dict[str, Any],
                       timeout_s: float) -> dict[str, Any]:
    """``body`` to the active controller (as the AdminClient's ControllerNodeProvider); retried once the controller
    is known again when the answer is NOT_CONTROLLER (41)."""
    servers = servers_of(bootstrap)
    deadline = time.monotonic() + timeout_s
    while True:
        meta = metadata(servers, timeout_s)
        if meta["controller_id"] >= 0:
            answer = exchange(_node(meta, meta["controller_id"]), api_key, version, body, timeout_s, servers.props)
            if answer.get("error_code") != 41 or time.monotonic() > deadline:
                return answer
        elif time.monotonic() > deadline:
            raise KafkaClientError("no controller in the cluster's metadata")
        time.sleep(0.2)


def coordinator_request(bootstrap: Bootstrap, group: str, api_key: int, version: int, body: dict[str, Any],
                        timeout_s: float) -> dict[str, Any]:
    """``body`` to ``group``'s coordinator; FindCoordinator and the request itself are retried on the coordinator
    errors the AdminClient retries, until ``timeout_s`` (then the last error is the answer)."""
    servers = servers_of(bootstrap)
    deadline = time.monotonic() + timeout_s
    while True:
        meta = metadata(servers, timeout_s)
        found = exchange(_node(meta, meta["brokers"][0]["node_id"]), *FIND_COORDINATOR,
                         {"key": group, "key_type": 0}, timeout_s, servers.props)
        if found["error_code"] == 0:
            answer = exchange((found["host"], found["port"]), api_key, version, body, timeout_s, servers.props)
            if answer.get("error_code") not in COORDINATOR_RETRIABLE or time.monotonic() > deadline:
                return answer
        elif found["error_code"] not in COORDINATOR_RETRIABLE or time.monotonic() > deadline:
            return {"error_code": found["error_code"]}
        time.sleep(0.2)


def node_request(bootstrap: Bootstrap, node_id: int | None, api_key: int, version: int, body: dict[str, Any],
                 timeout_s: float) -> dict[str, Any]:
    """``body`` to broker ``node_id`` (a broker resource's configs go to that broker, as the AdminClient sends
    them), or to the first broker of the metadata when None."""
    servers = servers_of(bootstrap)
    meta = metadata(servers, timeout_s)
    if node_id is None:
        node_id = meta["brokers"][0]["node_id"]
    return exchange(_node(meta, node_id), api_key, version, body, timeout_s, servers.props)


def topic_names(bootstrap: Bootstrap, timeout_s: float) -> list[str]:
    """Every topic, internal ones too (ListTopics with listInternal)."""
    servers = servers_of(bootstrap)
    meta = metadata(servers, timeout_s)
    answer = exchange(_node(meta, meta["brokers"][0]["node_id"]), *METADATA,
                      {"topics": None, "allow_auto_topic_creation": False,
                       "include_cluster_authorized_operations": False,
                       "include_topic_authorized_operations": False}, timeout_s, servers.props)
    return sorted(t["name"] for t in answer["topics"] if t["error_code"] == 0)
