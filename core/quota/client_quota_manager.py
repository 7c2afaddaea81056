"""Client quotas, as Kafka 2.6.3's ``kafka.server.ClientQuotaManager`` with its ``DefaultQuotaCallback`` and
``ClientRequestQuotaManager``: one manager per quota type (produce bytes, fetch bytes, request time percentage).

A client is measured by a sensor named by its quota's metric tags ``(user, client-id)``: which quota applies, and so
which clients share a sensor, is resolved in 2.6's order of precedence

    /config/users/<user>/clients/<client-id>      /config/users/<user>/clients/<default>
    /config/users/<user>                           /config/users/<default>/clients/<client-id>
    /config/users/<default>/clients/<default>      /config/users/<default>
    /config/clients/<client-id>                    /config/clients/<default>
    the static default (quota.producer.default / quota.consumer.default)

with 2.6's shortcut when quotas are set at one level only (``QuotaTypes``). A record that takes the client's rate
above its quota is answered with the time the client must wait to come back within it,
``(observed - quota) / quota * window`` (the request quota caps it at one quota window). Users are sanitized principal
names (``core.quota.enforcement.quota_user``: ``ANONYMOUS`` on a PLAINTEXT listener, the authenticated user on a SASL
one, the certificate's DN on an SSL one); client ids are raw.

Sensors idle for an hour are dropped (``InactiveSensorExpirationTimeSeconds``), so memory follows the clients seen
lately. Times are milliseconds the caller passes (the clock's reading); nothing here reads a clock or does I/O.
"""

from __future__ import annotations

import enum
import logging
import math

import attrs

from core.quota.quota_configs import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE
from core.quota.rate import QuotaSensor, QuotaViolationError, QuotaWindow
from messages.quota import ClientQuotaConfigChanged

log = logging.getLogger("kactor.quota")

DEFAULT = "<default>"  # ConfigEntityName.Default
LONG_MAX = (1 << 63) - 1
QUOTA_BYTES_PER_SECOND_DEFAULT = LONG_MAX  # ClientQuotaManagerConfig.QuotaBytesPerSecondDefault
DEFAULT_NUM_QUOTA_SAMPLES = 11
DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1
INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1e9



class QuotaType(enum.Enum):
    """kafka.server.QuotaType of the client quotas, with the config each reads."""

    FETCH = CONSUMER_BYTE_RATE
    PRODUCE = PRODUCER_BYTE_RATE
    REQUEST = REQUEST_PERCENTAGE


class _Enabled(enum.IntFlag):
    """QuotaTypes: the levels quotas have been set at since start-up."""

    NONE = 0
    CLIENT_ID = 1
    USER = 2
    USER_CLIENT_ID = 4


@attrs.frozen(slots=True)
class QuotaEntity:
    """KafkaQuotaEntity: a sanitized user (or DEFAULT) and/or a client id (or DEFAULT); None = not part of it."""

    user: str | None = None
    client_id: str | None = None


@attrs.frozen(slots=True)
class QuotaConfig:
    """ClientQuotaManagerConfig."""

    quota_bytes_per_second_default: int = QUOTA_BYTES_PER_SECOND_DEFAULT
    num_quota_samples: int = DEFAULT_NUM_QUOTA_SAMPLES
    quota_window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS

    @property
    def window(self) -> QuotaWindow:
        return QuotaWindow(self.num_quota_samples, self.quota_window_size_seconds * 1000)


MetricTags = tuple[str, str]  # (user, client-id) as DefaultQuotaCallback.quotaMetricTags gives them


class ClientQuotaManager:
    """ClientQuotaManager of one quota type (produce or fetch bytes; the request percentage is
    `ClientRequestQuotaManager`)."""

    def __init__(self, config: QuotaConfig, quota_type: QuotaType) -> None:
        self.config = config
        self.quota_type = quota_type
        self._window = config.window
        self._static_client_id_quota = float(config.quota_bytes_per_second_default)
        self._enabled = (_Enabled.NONE if config.quota_bytes_per_second_default == LONG_MAX
                         else _Enabled.CLIENT_ID)
        self._overridden: dict[QuotaEntity, float] = {}
        self._sensors: dict[MetricTags, QuotaSensor] = {}
        self._next_purge_ms: int | None = None

    # -- what Kafka's KafkaApis calls --------------------------------------------------------------------------------
    @property
    def quotas_enabled(self) -> bool:
        """Whether any quota of this type was ever set since start-up (Kafka keeps measuring once one was)."""
        return self._enabled != _Enabled.NONE

    def maybe_record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record ``value`` (bytes, or a request-time percentage) for the client; the throttle time in ms if that
        took its rate above its quota, else 0. Nothing is recorded while no quota of this type was ever set."""
        if not self.quotas_enabled:
            return 0
        return self.record_and_get_throttle_time_ms(user, client_id, value, now_ms)

    def record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float, now_ms: int) -> int:
        sensor = self._sensor(user, client_id, now_ms)
        try:
            sensor.record(value, now_ms)
        except QuotaViolationError as e:
            return int(self.throttle_time(e.value, e.bound, e.window_size_ms))
        return 0

    def unrecord_quota_sensor(self, user: str, client_id: str, value: float, now_ms: int) -> None:
        """unrecordQuotaSensor: take back a value recorded for a response that is not sent (a throttled fetch)."""
        self._sensor(user, client_id, now_ms).record(-value, now_ms, check=False)

    def throttle_time(self, value: float, bound: float, window_size_ms: int) -> int:
        """ClientQuotaManager.throttleTime: the delay X that brings the observed rate O over window W down to the
        quota T, O * W / (W + X) = T, so X = (O - T) / T * W (Math.round)."""
        return _java_round((value - bound) / bound * window_size_ms)

    def get_max_value_in_quota_window(self, user: str, client_id: str, now_ms: int) -> float:
        """getMaxValueInQuotaWindow: the most a client may take at once without being throttled for sure."""
        if not self.quotas_enabled:
            return float("inf")
        limit = self._quota_limit(self._metric_tags(user, client_id))
        if limit is None:
            return float("inf")
        return limit * (self.config.num_quota_samples - 1) * self.config.quota_window_size_seconds

    def quota(self, user: str, client_id: str) -> float:
        """ClientQuotaManager.quota: the bound that applies to the client (Long.MaxValue when none does)."""
        limit = self._quota_limit(self._metric_tags(user, client_id))
        return float(LONG_MAX) if limit is None else limit

    # -- dynamic configuration ----------------------------------------------------------------------------------------
    def update_quota(self, entity: QuotaEntity, quota: float | None) -> None:
        """updateQuota: set (or with None remove) the quota of ``entity``; sensors that exist take their new bound
        at once and keep what they measured."""
        if entity.user is not None:
            self._enabled |= _Enabled.USER_CLIENT_ID if entity.client_id is not None else _Enabled.USER
        elif entity.client_id is not None:
            self._enabled |= _Enabled.CLIENT_ID
        if quota is None:
            if self._overridden.pop(entity, None) is not None:
                log.info("Removing %s quota for %s", self.quota_type.name, entity)
        else:
            log.info("Changing %s quota for %s to %s", self.quota_type.name, entity, quota)
            self._overridden[entity] = float(quota)
        # updateQuotaMetricConfigs: every existing sensor's bound is recomputed (2.6 narrows this to one sensor when a
        # single level is set, with the same outcome)
        for tags, sensor in self._sensors.items():
            sensor.bound = self._quota_limit(tags)

    # -- DefaultQuotaCallback ----------------------------------------------------------------------------------------
    def _metric_tags(self, user: str, client_id: str) -> MetricTags:
        """DefaultQuotaCallback.quotaMetricTags: the (user, client-id) of the sensor the client is measured by."""
        enabled = self._enabled
        if enabled in (_Enabled.NONE, _Enabled.CLIENT_ID):
            return "", client_id
        if enabled == _Enabled.USER:
            return user, ""
        if enabled == _Enabled.USER_CLIENT_ID:
            return user, client_id
        o = self._overridden
        for entity, tags in (
                (QuotaEntity(user, client_id), (user, client_id)),
                (QuotaEntity(user, DEFAULT), (user, client_id)),
                (QuotaEntity(user, None), (user, "")),
                (QuotaEntity(DEFAULT, client_id), (user, client_id)),
                (QuotaEntity(DEFAULT, DEFAULT), (user, client_id)),
                (QuotaEntity(DEFAULT, None), (user, ""))):
            if entity in o:
                return tags
        return "", client_id

    def _quota_limit(self, tags: MetricTags) -> float | None:
        """DefaultQuotaCallback.quotaLimit: the quota of a sensor's tags, most specific entity first."""
        user, client_id = tags
        o = self._overridden
        candidates: tuple[QuotaEntity, ...]
        if user and client_id:
            candidates = (QuotaEntity(user, client_id), QuotaEntity(user, DEFAULT), QuotaEntity(DEFAULT, client_id),
                          QuotaEntity(DEFAULT, DEFAULT))
        elif user:
            candidates = (QuotaEntity(user, None), QuotaEntity(DEFAULT, None))
        elif client_id:
            candidates = (QuotaEntity(None, client_id), QuotaEntity(None, DEFAULT))
        else:
            return None
        for entity in candidates:
            if entity in o:
                return o[entity]
        if not user and client_id and self._static_client_id_quota < LONG_MAX:
            return self._static_client_id_quota
        return None

    def _sensor(self, user: str, client_id: str, now_ms: int) -> QuotaSensor:
        """getOrCreateQuotaSensors (the quota sensor; throttle-time averages are kactor's metrics' business)."""
        self._purge_inactive(now_ms)
        tags = self._metric_tags(user, client_id)
        sensor = self._sensors.get(tags)
        if sensor is None:
            sensor = QuotaSensor(self._window, self._quota_limit(tags), now_ms)
            self._sensors[tags] = sensor
        return sensor

    def _purge_inactive(self, now_ms: int) -> None:
        """Metrics' ExpireSensorTask: sensors unused for InactiveSensorExpirationTimeSeconds go (checked at most
        once a minute, as Kafka's task runs every 30 s)."""
        if self._next_purge_ms is not None and now_ms < self._next_purge_ms:
            return
        self._next_purge_ms = now_ms + 60_000
        expired = [t for t, s in self._sensors.items() if now_ms - s.last_used_ms > INACTIVE_SENSOR_EXPIRATION_MS]
        for t in expired:
            del self._sensors[t]

    def sensor_count(self) -> int:
        return len(self._sensors)


class ClientRequestQuotaManager(ClientQuotaManager):
    """ClientRequestQuotaManager: request time as a percentage of one thread's time, throttled for at most one
    quota window."""

    def __init__(self, config: QuotaConfig) -> None:
        super().__init__(attrs.evolve(config, quota_bytes_per_second_default=LONG_MAX), QuotaType.REQUEST)
        self.max_throttle_time_ms = config.quota_window_size_seconds * 1000

    def throttle_time(self, value: float, bound: float, window_size_ms: int) -> int:
        return min(super().throttle_time(value, bound, window_size_ms), self.max_throttle_time_ms)

    @staticmethod
    def nanos_to_percentage(nanos: int) -> float:
        return nanos * NANOS_TO_PERCENTAGE_PER_SECOND


class QuotaManagers:
    """QuotaManagers' client part: the produce, fetch and request managers of a broker."""

    def __init__(self, config: QuotaConfig, consumer_default: int = QUOTA_BYTES_PER_SECOND_DEFAULT) -> None:
        self.produce = ClientQuotaManager(config, QuotaType.PRODUCE)
        self.fetch = ClientQuotaManager(attrs.evolve(config, quota_bytes_per_second_default=consumer_default),
                                        QuotaType.FETCH)
        self.request = ClientRequestQuotaManager(config)

    def update_quota_config(self, change: ClientQuotaConfigChanged) -> None:
        """QuotaConfigHandler.updateQuotaConfig: each type's quota from the entity's config (absent = removed).
        The client id of a sensor is the raw one: the znode's sanitized name is desanitized (not <default>)."""
        config = dict(change.config)
        client_id = change.client_id
        if client_id is not None and client_id != DEFAULT:
            client_id = desanitize(client_id)
        entity = QuotaEntity(change.user, client_id)
        for manager in (self.produce, self.fetch, self.request):
            text = config.get(manager.quota_type.value)
            manager.update_quota(entity, None if text is None else parse_quota(manager.quota_type, text))


def parse_quota(quota_type: QuotaType, text: str) -> float:
    """The quota a znode's value sets: ``toLong.toDouble`` for the byte rates, ``toDouble`` for the percentage.
    ValueError for a value Kafka's parse would refuse."""
    text = text.strip()
    if quota_type is QuotaType.REQUEST:
        return float(text)
    value = int(text)
    if not -LONG_MAX - 1 <= value <= LONG_MAX:
        raise ValueError(f"For input string: \"{text}\"")
    return float(value)


def _java_round(x: float) -> int:
    """Math.round: halves round up."""
    return math.floor(x + 0.5)


# -- Sanitizer ------------------------------------------------------------------------------------------------------
_UNRESERVED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def sanitize(name: str) -> str:
    """org.apache.kafka.common.utils.Sanitizer.sanitize: URL-encoded UTF-8 with ``*`` as %2A and space as %20 (a
    znode name any user principal or client id can be written as)."""
    out: list[str] = []
    for ch in name:
        if ch in _UNRESERVED:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def desanitize(name: str) -> str:
    """Sanitizer.desanitize (URLDecoder.decode: ``+`` is a space)."""
    from urllib.parse import unquote_plus

    return unquote_plus(name, encoding="utf-8")
