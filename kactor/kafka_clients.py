"""Kafka's own client library — confluent-kafka, which bundles librdkafka — set up the way kactor's tools use it.

`kactor consume`, `kactor produce --bootstrap-server`, `kactor consumer-groups`, `kactor describe --watch --produce`
and the chaos runner's data client talk to a kactor cluster exactly as any Kafka application does: through Kafka's
protocol, learning the brokers, leaders and coordinators from the cluster itself (Metadata, FindCoordinator), never
from ZooKeeper. What they share lives here: the ``--bootstrap-server`` value's check, the common configuration
(librdkafka's log lines go to Python logging, not to the terminal: the tools report failures themselves, once), and
turning librdkafka's errors into one clear line.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

#: librdkafka's own log lines (connection refused while a broker restarts, ...) go here, silent unless configured
LIBRDKAFKA_LOGGER = logging.getLogger("kactor.librdkafka")
LIBRDKAFKA_LOGGER.addHandler(logging.NullHandler())
LIBRDKAFKA_LOGGER.propagate = False

DEFAULT_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 30.0  # a consumer's close: its final commit and LeaveGroup take a request timeout at most
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


class KafkaClientError(Exception):
    """A Kafka client operation failed; the message is one line a user can act on."""


def parse_bootstrap(value: str) -> str:
    """``host:port[,host:port...]`` as Kafka's ``bootstrap.servers`` takes it (an optional ``PLAINTEXT://``
    prefix is accepted, as Kafka's clients do); ValueError with the offending entry otherwise."""
    entries = [e.strip() for e in value.split(",")]
    if not value.strip() or any(not e for e in entries):
        raise ValueError(f"expected host:port[,host:port...], got {value!r}")
    out = []
    for entry in entries:
        bare = entry.split("://", 1)[1] if "://" in entry else entry
        m = _HOST_PORT.match(bare)
        if m is None or not 0 < int(m.group(2)) < 65536:
            raise ValueError(f"{entry!r} is not host:port (a port between 1 and 65535)")
        out.append(bare)
    return ",".join(out)


def client_config(bootstrap: str, client_id: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The configuration every kactor tool's client starts from, then ``extra`` (librdkafka's property names)."""
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "logger": LIBRDKAFKA_LOGGER,
        # a broker that is down should be noticed in seconds, not librdkafka's 30 s default
        "socket.connection.setup.timeout.ms": 5000,
    }
    conf.update(extra or {})
    return conf


def error_text(error: Any) -> str:
    """A KafkaError (or a KafkaException carrying one) as ``NAME: description``."""
    err = error.args[0] if isinstance(error, Exception) and error.args else error
    if hasattr(err, "name") and hasattr(err, "str"):
        return f"{err.name()}: {err.str()}"
    return str(err)


def close_within(client: Any, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
    """``client.close()``, given up after ``timeout_s``: False if it had not returned by then (its thread, a daemon,
    is left to it). librdkafka 2.10 and later can hang in a consumer's close once a broker it knew was killed and
    dropped from the metadata (its handle "terminating" for ever with references left: confluentinc/librdkafka#5511,
    the family of the Quix hang in docs/reliability.md); a `kactor chaos` seed's consumer hung there at its end on
    2026-11-27, after every check had passed, and the run with it."""
    done = threading.Event()

    def close() -> None:
        try:
            client.close()
        except Exception:  # noqa: BLE001 - closing: nothing left to do about its error
            LIBRDKAFKA_LOGGER.debug("close failed", exc_info=True)
        finally:
            done.set()

    threading.Thread(target=close, name="kafka-client-close", daemon=True).start()
    if done.wait(timeout_s):
        return True
    LIBRDKAFKA_LOGGER.warning("a Kafka client's close did not return within %.0f s: left to finish on its own",
                              timeout_s)
    return False


# A leadership that moved since librdkafka's last metadata refresh: the query goes to the old leader, which answers
# so (as Kafka's would); librdkafka refreshes its metadata on that answer, and the query asked again finds the new one.
RETRIABLE_LOOKUP = frozenset({"NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE", "REQUEST_TIMED_OUT",
                              "_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN"})
LOOKUP_BACKOFF_S = 0.2


def watermark_offsets(consumer: Any, tp: Any, deadline: float) -> tuple[int, int]:
    """``tp``'s (log start, high watermark) from its leader (ListOffsets earliest and latest), asked again after a
    retriable error until ``deadline`` (time.monotonic()), as a Java consumer's offsetsForTimes / endOffsets retry
    after a metadata update. librdkafka's ``get_watermark_offsets`` raises the leader's NOT_LEADER_FOR_PARTITION
    instead: chaos seed 1 at 111f0f1 failed so on its last check, after every other had passed, and so did CI's
    read-back of a partition after two leader kills (test_cluster_broker_restart, 2026-11-27)."""
    from confluent_kafka import KafkaException

    while True:
        try:
            low, high = consumer.get_watermark_offsets(tp, timeout=max(deadline - time.monotonic(), 0.1),
                                                       cached=False)
            return int(low), int(high)
        except KafkaException as e:
            error = e.args[0] if e.args else None
            if getattr(error, "name", lambda: "")() not in RETRIABLE_LOOKUP or time.monotonic() >= deadline:
                raise
        time.sleep(LOOKUP_BACKOFF_S)


def cluster_metadata(client: Any, bootstrap: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                     topic: str | None = None) -> Any:
    """``client.list_topics`` (a Metadata request), or KafkaClientError naming the bootstrap servers when no
    broker answered within ``timeout_s``."""
    from confluent_kafka import KafkaException

    try:
        return client.list_topics(topic=topic, timeout=timeout_s)
    except KafkaException as e:
        raise KafkaClientError(f"cannot get metadata from the bootstrap server(s) {bootstrap} within "
                               f"{timeout_s:g} s ({error_text(e)}): is a broker listening there?") from None


def admin_client(bootstrap: str, client_id: str = "kactor-admin", extra: Mapping[str, Any] | None = None) -> Any:
    """A confluent_kafka AdminClient with `client_config`."""
    from confluent_kafka.admin import AdminClient

    return AdminClient(client_config(bootstrap, client_id, extra))


def topic_partitions(client: Any, bootstrap: str, topic: str, partition: int | None = None,
                     timeout_s: float = DEFAULT_TIMEOUT_S) -> list[int]:
    """The topic's partitions from the cluster's metadata — only ``partition`` when given — or KafkaClientError:
    ``Topic T does not exist``, the topic's error, or a partition it does not have."""
    metadata = cluster_metadata(client, bootstrap, timeout_s, topic)
    info = metadata.topics.get(topic)
    if info is None or (info.error is not None and info.error.name() == "UNKNOWN_TOPIC_OR_PART"):
        raise KafkaClientError(f"Topic {topic} does not exist")
    if info.error is not None:
        raise KafkaClientError(f"Topic {topic}: {error_text(info.error)}")
    partitions = sorted(info.partitions)
    if partition is None:
        return partitions
    if partition not in info.partitions:
        raise KafkaClientError(f"Partition {partition} of topic {topic} does not exist "
                               f"(partitions 0..{max(partitions)})")
    return [partition]


def end_offsets(admin: Any, partitions: Iterable[tuple[str, int]], timeout_s: float) -> dict[tuple[str, int], int]:
    """ListOffsets(latest) for ``partitions`` through an AdminClient: each partition's log end as a consumer sees
    it (the high watermark); a partition whose leader did not answer is left out."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    wanted = {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions}
    if not wanted:
        return {}
    out: dict[tuple[str, int], int] = {}
    for tp, future in admin.list_offsets(wanted, request_timeout=timeout_s).items():
        try:
            out[(tp.topic, tp.partition)] = future.result(timeout_s + 5).offset
        except Exception:  # noqa: BLE001 - no leader now, a broker down: unknown this time
            continue
    return out
