"""A log dir's ``meta.properties``: which broker of which cluster the dir belongs to (Kafka 2.6.3's
``BrokerMetadataCheckpoint``), and the start-up checks ``KafkaServer.startup`` makes with it.

Every log dir holds ``version=0``, ``broker.id`` and ``cluster.id``, written once the broker is registered
(``KafkaServer.checkpointBrokerMetadata``). At the next start the broker reads them before it opens any log
(``getBrokerMetadataAndOfflineDirs``) and refuses to start when the dirs disagree with each other, when the stored
``cluster.id`` is not ZooKeeper's ``/cluster/id`` (the broker would serve one cluster's records under another's
topics) or when the stored ``broker.id`` is not the configured one (another broker's data). Pure code: the files are
read and written by ``edges.log_dirs``.
"""

from __future__ import annotations

import time

import attrs

META_PROPERTIES = "meta.properties"  # KafkaServer.brokerMetaPropsFile
META_PROPERTIES_VERSION = 0
INT_MAX = 2**31 - 1


class BrokerMetadataError(Exception):
    """A start-up refusal with Kafka's exception name and message (``str()`` is what Kafka's log shows after
    "Fatal error during KafkaServer startup. Prepare to shutdown")."""

    kafka_class = "org.apache.kafka.common.KafkaException"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.kafka_class}: {self.message}"


class InconsistentClusterIdError(BrokerMetadataError):
    kafka_class = "kafka.common.InconsistentClusterIdException"


class InconsistentBrokerIdError(BrokerMetadataError):
    kafka_class = "kafka.common.InconsistentBrokerIdException"


class InconsistentBrokerMetadataError(BrokerMetadataError):
    kafka_class = "kafka.common.InconsistentBrokerMetadataException"


class MetaPropertiesError(BrokerMetadataError):
    """meta.properties exists but cannot be used (BrokerMetadataCheckpoint.read's failures)."""

    kafka_class = "java.io.IOException"


@attrs.frozen(slots=True)
class BrokerMetadata:
    """kafka.server.BrokerMetadata: ``broker_id`` -1 and ``cluster_id`` None when no dir has a meta.properties."""

    broker_id: int
    cluster_id: str | None

    def __str__(self) -> str:
        return f"BrokerMetadata(brokerId={self.broker_id}, clusterId={self.cluster_id or 'None'})"


NO_METADATA = BrokerMetadata(-1, None)


def java_date(epoch_s: float) -> str:
    """``new Date().toString()`` in UTC (``EEE MMM dd HH:mm:ss zzz yyyy``), the second comment line of a file
    written by ``java.util.Properties.store``."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(epoch_s))


def format_meta_properties(metadata: BrokerMetadata, epoch_s: float) -> str:
    """BrokerMetadataCheckpoint.write's file, as ``Properties.store(out, "")`` writes it: an empty comment, the date,
    then the entries (in the order a JVM's Hashtable lists these three keys, as real Kafka 2.6 files show)."""
    lines = ["#", f"#{java_date(epoch_s)}"]
    if metadata.cluster_id is not None:
        lines.append(f"cluster.id={_escape(metadata.cluster_id)}")
    lines += [f"version={META_PROPERTIES_VERSION}", f"broker.id={metadata.broker_id}"]
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    """Properties.saveConvert for a value: backslash before the characters a reader would take as syntax."""
    out = []
    for i, ch in enumerate(value):
        if ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch == " " and i == 0:
            out.append("\\ ")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        else:
            out.append(ch)
    return "".join(out)


def parse_properties(text: str) -> dict[str, str]:
    """``java.util.Properties.load`` over what a meta.properties holds: ``#``/``!`` comments, ``key=value``,
    ``key:value`` or ``key value``, backslash escapes and continuation lines."""
    out: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes: the line goes on
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        key, value = _split_entry(line)
        out[_unescape(key)] = _unescape(value)
    if pending:
        key, value = _split_entry(pending)
        out[_unescape(key)] = _unescape(value)
    return out


def _split_entry(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                try:
                    out.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _int_in_range(props: dict[str, str], name: str) -> int:
    """VerifiableProperties.getIntInRange(name, (0, Int.MaxValue))."""
    if name not in props:
        raise MetaPropertiesError(f"requirement failed: Missing required property '{name}'")
    try:
        value = int(props[name])
    except ValueError:
        raise MetaPropertiesError(f'For input string: "{props[name]}"') from None
    if not 0 <= value <= INT_MAX:
        raise MetaPropertiesError(f"requirement failed: {name} has value {value} which is not in the range "
                                  f"(0,{INT_MAX}).")
    return value


def read_meta_properties(text: str, path: str) -> BrokerMetadata:
    """BrokerMetadataCheckpoint.read of an existing file ``path`` whose content is ``text``. Raises
    MetaPropertiesError with Kafka's words ("Failed to read meta.properties file under dir ...")."""
    try:
        props = parse_properties(text)
        version = _int_in_range(props, "version")
        if version != META_PROPERTIES_VERSION:
            raise MetaPropertiesError(f"Unrecognized version of the server meta.properties file: {version}")
        return BrokerMetadata(_int_in_range(props, "broker.id"), props.get("cluster.id"))
    except MetaPropertiesError as e:
        raise MetaPropertiesError(f"Failed to read meta.properties file under dir {path} due to {e.message}") from None


def consistent_metadata(found: dict[str, BrokerMetadata]) -> BrokerMetadata:
    """KafkaServer.getBrokerMetadataAndOfflineDirs: log dir → its meta.properties (dirs without one absent). The one
    BrokerMetadata they all hold, NO_METADATA when none has one; InconsistentBrokerMetadataError when they differ."""
    distinct = set(found.values())
    if len(distinct) > 1:
        listing = "".join(f"- {d} -> {m}\n" for d, m in found.items())
        raise InconsistentBrokerMetadataError(
            "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared a log "
            f"directory (log.dirs) or partial data was manually copied from another broker. Found:\n{listing}")
    return distinct.pop() if distinct else NO_METADATA


def check_broker_metadata(stored: BrokerMetadata, cluster_id: str, broker_id: int) -> int:
    """KafkaServer.startup's checks of the stored metadata against ZooKeeper's /cluster/id (``cluster_id``) and the
    configured ``broker_id`` (getOrGenerateBrokerId; kactor requires a configured id). Returns the broker id."""
    if stored.cluster_id is not None and stored.cluster_id != cluster_id:
        raise InconsistentClusterIdError(
            f"The Cluster ID {cluster_id} doesn't match stored clusterId Some({stored.cluster_id}) in "
            "meta.properties. The broker is trying to join the wrong cluster. Configured zookeeper.connect may be "
            "wrong.")
    if broker_id >= 0 and stored.broker_id >= 0 and stored.broker_id != broker_id:
        raise InconsistentBrokerIdError(
            f"Configured broker.id {broker_id} doesn't match stored broker.id {stored.broker_id} in "
            "meta.properties. If you moved your data, make sure your configured broker.id matches. If you intend "
            "to create a new broker, you should remove all data in your data directories (log.dirs).")
    return broker_id if broker_id >= 0 else stored.broker_id
