"""Client quotas by principal (issue #39): a request is measured as its connection's KafkaPrincipal, as Kafka 2.6.3's
ClientQuotaManager measures ``request.session`` — ``User:ANONYMOUS`` on a PLAINTEXT listener, the authenticated user
on a SASL one (also after a re-authentication), the certificate's DN on an SSL one — with DefaultQuotaCallback's
precedence over /config/users/<sanitized user>[/clients/<client-id>] and /config/clients/<client-id>. Under a
/config/users/<default> quota each user has a sensor of its own: one tenant's traffic does not throttle another's.

The first tests drive edges/client_quotas.py directly with a fake clock; the others a Transport whose "replica
manager" answers every Produce at once (as tests/edges/test_edges_client_quotas.py), through real sockets."""

from __future__ import annotations

import socket
import ssl
import time
from typing import Any

import pytest
from edge_support import AnsweringRuntime

import core.api  # noqa: F401 - registers every API
from core.quota.client_quota_manager import DEFAULT, QuotaConfig
from core.quota.enforcement import quota_user
from core.security.sasl import ListenerSasl, parse_jaas_config
from edges.client_quotas import ClientQuotas
from edges.net.tls_context import server_context
from edges.transport import Transport
from messages.quota import ClientQuotaConfigChanged
from tests.support.raw_client import RawClient
from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki

PRODUCE = 0
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret" user_bob="bob-secret";')
SASL = ListenerSasl(("PLAIN",), {"PLAIN": parse_jaas_config(PLAIN_JAAS)[0]})


def change(user: str | None, client_id: str | None, **config: int) -> ClientQuotaConfigChanged:
    return ClientQuotaConfigChanged(user, client_id, tuple((k, str(v)) for k, v in config.items()))


# -- the edge's quota managers, a fake clock ------------------------------------------------------------------------
def test_quota_user_is_the_sanitized_principal_name() -> None:
    """Session.sanitizedUser: Sanitizer.sanitize of the principal's name (what /config/users/<user> is named)."""
    assert quota_user("User:ANONYMOUS") == "ANONYMOUS"
    assert quota_user("User:alice") == "alice"
    assert quota_user("User:CN=alice,O=kactor tests") == "CN%3Dalice%2CO%3Dkactor%20tests"
    assert quota_user("User:a:b*é") == "a%3Ab%2A%C3%A9"  # split at the first colon only


class Edge:
    """edges.client_quotas.ClientQuotas with a clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.quotas = ClientQuotas(QuotaConfig(), clock=lambda: self.now)

    def produce(self, principal: str, client_id: str, size: int) -> int:
        body = {"throttle_time_ms": 0, "responses": []}
        return self.quotas.answer(PRODUCE, client_id, body, size, {"acks": -1}, 0, lambda b: b"x",
                                  principal=principal)[1]


def test_a_default_user_quota_is_a_sensor_per_user() -> None:
    """The audit's repro (quota_user_is_anonymous.py): /config/users/<default> producer_byte_rate=100000; alice and bob
    each produce 600 kB (60 kB/s each over the 10 s window): neither is throttled, as in 2.6.3. A second 600 kB of
    alice's — on any client id, the <user> quota is shared by the user's clients — is."""
    edge = Edge()
    edge.quotas.update(change(DEFAULT, None, producer_byte_rate=100_000))
    assert edge.produce("User:alice", "app", 600_000) == 0
    edge.now += 500
    assert edge.produce("User:bob", "app", 600_000) == 0
    edge.now += 10
    assert edge.produce("User:alice", "other-app", 600_000) > 0
    # the PLAINTEXT listener's clients are one user, ANONYMOUS, with a sensor of its own
    assert edge.produce("User:ANONYMOUS", "app", 600_000) == 0
    assert edge.produce("User:ANONYMOUS", "app2", 600_000) > 0


@pytest.mark.parametrize("quota", ["producer_byte_rate", "consumer_byte_rate", "request_percentage"])
def test_each_quota_type_is_measured_per_user(quota: str) -> None:
    """Produce bytes, a consumer's Fetch answer bytes, request time: under users/<default> each is one user's.
    alice takes twice her quota at once (throttled), bob takes what alice first took (not throttled)."""
    edge = Edge()
    edge.quotas.update(change(DEFAULT, None, **{quota: 100_000 if quota != "request_percentage" else 1}))

    def take(principal: str, amount: int) -> int:
        if quota == "producer_byte_rate":
            return edge.produce(principal, "app", amount)
        if quota == "consumer_byte_rate":
            body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": []}
            return edge.quotas.answer(1, "app", body, 100, {"replica_id": -1}, 0, lambda b: b"x" * amount,
                                      principal=principal)[1]
        return edge.quotas.answer(18, "app", {"throttle_time_ms": 0}, 100, {}, amount * 10_000, lambda b: b"x",
                                  principal=principal)[1]  # 1,000 → 10^7 ns, 1 % of a second

    # 60 % of what the quota allows over the 10 s window: 600 kB at 100 kB/s, 60 ms of request time at 1 %
    first = 600_000 if quota != "request_percentage" else 6_000
    assert take("User:alice", first) == 0
    assert take("User:bob", first) == 0
    assert take("User:alice", first) > 0


def test_a_user_quota_applies_to_that_user_only() -> None:
    edge = Edge()
    edge.quotas.update(change("alice", None, producer_byte_rate=1))
    assert edge.produce("User:alice", "app", 10_000) > 0
    assert edge.produce("User:bob", "app", 10_000) == 0
    assert edge.produce("User:ANONYMOUS", "app", 10_000) == 0
    # quotas set at the <user> level only: every user is measured by a sensor of its own (QuotaTypes.UserQuotaEnabled),
    # unbounded for those without a quota
    assert edge.quotas.managers.produce.sensor_count() == 3


# DefaultQuotaCallback.quotaLimit / quotaMetricTags: the entities a (user, client-id) is measured by, most specific
# first (the entity names as their znodes are named: the user sanitized, the client id sanitized)
SSL_PRINCIPAL = "User:CN=alice,O=kactor tests"
SSL_USER = "CN%3Dalice%2CO%3Dkactor%20tests"
LEVELS = [(SSL_USER, "app%2F1"), (SSL_USER, DEFAULT), (SSL_USER, None), (DEFAULT, "app%2F1"), (DEFAULT, DEFAULT),
          (DEFAULT, None), (None, "app%2F1"), (None, DEFAULT)]
HUGE, TINY = 10**12, 1


@pytest.mark.parametrize("level", range(len(LEVELS)), ids=[f"{u}/{c}" for u, c in LEVELS])
def test_precedence_of_the_entities(level: int) -> None:
    """With quotas at ``level`` and at every less specific one, ``level``'s applies: a huge quota there and tiny
    ones below are not throttled, a tiny one there and huge ones below are. The principal is an SSL certificate's
    DN, so its user entity is the sanitized name; the client id ``app/1`` is sanitized in its znode's name."""
    for mine, others in ((HUGE, TINY), (TINY, HUGE)):
        edge = Edge()
        for i, (user, client_id) in enumerate(LEVELS[level:]):
            edge.quotas.update(change(user, client_id, producer_byte_rate=mine if i == 0 else others))
        throttle = edge.produce(SSL_PRINCIPAL, "app/1", 10_000)
        assert (throttle > 0) == (mine == TINY), (LEVELS[level], mine, throttle)


# -- through a Transport's listeners ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def ssl_context(pki: Pki) -> ssl.SSLContext:
    return server_context({"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                           "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                           "ssl.keystore.password": STORE_PASSWORD, "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": pki.ca_pem, "ssl.client.auth": "required"})


@pytest.fixture
def node(pki: Pki) -> Any:
    """A Transport with a PLAINTEXT listener, a SASL_PLAINTEXT one (PLAIN: alice, bob; sessions of a minute, renewed
    by re-authentication) and an SSL one (client certificates required), all measured by one set of quota managers."""
    rt = AnsweringRuntime()
    sasl = ListenerSasl(SASL.mechanisms, SASL.jaas, {"PLAIN": 60_000})
    t = Transport(rt, client_quotas=ClientQuotas(QuotaConfig()),
                  extra_listeners=(("127.0.0.1", 0, "SASL"), ("127.0.0.1", 0, "SSL")), sasl={"SASL": sasl},
                  tls={"SSL": ssl_context(pki)})
    rt.transport = t
    yield t
    t.close()


class Client(RawClient):
    """Kafka frames over one connection: PLAINTEXT, SASL (``login``) or TLS (``sock`` given)."""

    def __init__(self, port: int, client_id: str = "app", sock: socket.socket | None = None) -> None:
        super().__init__(port, client_id, sock)

    def login(self, user: str, password: str) -> Client:
        self.plain_login(user, password)
        return self

    def produce(self, size: int = 20_000) -> tuple[int, float]:
        """A Produce v8 of ``size`` bytes: its throttle_time_ms and how long its answer took (s)."""
        body = {"transactional_id": None, "acks": 1, "timeout_ms": 1000,
                "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"x" * size}]}]}
        sent = time.monotonic()
        answer = self.call(PRODUCE, 8, body)
        return int(answer["throttle_time_ms"]), time.monotonic() - sent
def sasl_port(t: Transport) -> int:
    return t.bound[1][1]


def until_throttled(c: Client, at_least_ms: int = 300, most: int = 30) -> int:
    """Produce 20 kB at a time until an answer is throttled for ``at_least_ms`` (a 20,000 B/s quota lets the first
    ~200 kB through; each 20 kB more adds about a second)."""
    for _ in range(most):
        throttle, _ = c.produce()
        if throttle >= at_least_ms:
            return throttle
    raise AssertionError(f"not throttled {at_least_ms} ms after {most} produces")


def test_sasl_users_under_a_default_user_quota_are_throttled_independently(node: Transport) -> None:
    """/config/users/<default> producer_byte_rate=20000: alice, over her quota, is throttled (her next request
    waits out the mute); bob, producing under the quota, is not, nor held behind alice. On the code before
    (everyone ANONYMOUS) bob shared alice's sensor and was throttled at once."""
    node.update_client_quota(change(DEFAULT, None, producer_byte_rate=20_000))
    alice = Client(sasl_port(node), "alice-app").login("alice", "alice-secret")
    bob = Client(sasl_port(node), "bob-app").login("bob", "bob-secret")
    try:
        throttle = until_throttled(alice)
        waited = alice.produce()[1]
        assert waited * 1000 >= throttle * 0.9, (waited, throttle)  # alice's channel was muted for her throttle
        answers = [bob.produce() for _ in range(5)]  # 100 kB: within bob's own credit
        assert [t for t, _ in answers] == [0] * 5
        assert sum(w for _, w in answers) * 1000 < throttle, answers
    finally:
        alice.close()
        bob.close()
    quotas = node.client_quotas
    assert quotas is not None and quotas.managers.produce.sensor_count() == 2


def test_the_user_stays_the_same_after_a_reauthentication(node: Transport) -> None:
    """KIP-368: a re-authenticated session keeps its principal, and with it its user's quota (users/alice tiny)."""
    node.update_client_quota(change("alice", None, producer_byte_rate=1))
    alice = Client(sasl_port(node)).login("alice", "alice-secret")
    bob = Client(sasl_port(node)).login("bob", "bob-secret")
    try:
        alice.login("alice", "alice-secret")  # the session's first re-authentication may begin at once
        assert alice.produce(1_000)[0] > 0
        assert bob.produce(1_000)[0] == 0
    finally:
        alice.close()
        bob.close()


def test_plaintext_clients_are_user_anonymous(node: Transport) -> None:
    """/config/users/ANONYMOUS is the PLAINTEXT listener's quota; a SASL user is not measured by it."""
    node.update_client_quota(change("ANONYMOUS", None, producer_byte_rate=1))
    plain = Client(node.port)
    alice = Client(sasl_port(node)).login("alice", "alice-secret")
    try:
        assert plain.produce(1_000)[0] > 0
        assert alice.produce(1_000)[0] == 0
    finally:
        plain.close()
        alice.close()


def test_ssl_clients_are_their_certificates_principal(node: Transport, pki: Pki) -> None:
    """An SSL listener's client is measured as its certificate's DN (User:CN=alice,O=kactor tests), the user entity
    of /config/users/CN%3Dalice%2CO%3Dkactor%20tests: that quota throttles alice's certificate, not bob's."""
    node.update_client_quota(change(SSL_USER, None, producer_byte_rate=1))
    assert pki.client.dn == "CN=alice,O=kactor tests"

    def connect(identity: Any) -> Client:
        context = ssl.create_default_context(cafile=pki.ca_pem)
        context.load_cert_chain(identity.cert, identity.key)
        raw = socket.create_connection(("127.0.0.1", node.bound[2][1]), timeout=10)
        return Client(0, sock=context.wrap_socket(raw, server_hostname="127.0.0.1"))

    alice, bob = connect(pki.client), connect(pki.bob)
    try:
        assert alice.produce(1_000)[0] > 0
        assert bob.produce(1_000)[0] == 0
    finally:
        alice.close()
        bob.close()


def test_an_api_versions_before_authentication_is_not_measured(node: Transport) -> None:
    """SaslServerAuthenticator answers a SASL connection's ApiVersions itself, outside KafkaApis' quotas: with
    request_percentage tiny for ANONYMOUS, an ApiVersions on the PLAINTEXT listener is throttled, one on the SASL
    listener before the handshake is not."""
    node.update_client_quota(change("ANONYMOUS", None, request_percentage=0.00001))
    body = {"client_software_name": "t", "client_software_version": "1"}
    plain, sasl = Client(node.port), Client(sasl_port(node))
    try:
        assert plain.call(18, 3, body)["throttle_time_ms"] > 0
        assert sasl.call(18, 3, body)["throttle_time_ms"] == 0
    finally:
        plain.close()
        sasl.close()

