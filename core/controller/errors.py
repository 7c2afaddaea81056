"""Exceptions of the controller core, named after Kafka's (kafka.common / org.apache.kafka.common.errors)."""

from __future__ import annotations

from messages.topic_deletion import RaisedError


class ControllerMovedError(Exception):
    """Kafka's ControllerMovedException: an epoch-fenced ZooKeeper write found /controller_epoch at another version.

    Never retried and never swallowed by the state machines: the controller must resign (KafkaController.maybeResign).
    """


class StateChangeFailedError(Exception):
    """Kafka's StateChangeFailedException: one partition / replica could not make its transition (logged)."""


class IllegalStateError(Exception):
    """Java's IllegalStateException as the controller uses it (a non-empty request batch at newBatch, an invalid
    state transition reported to the state-change log, a failed sendRequestsToBrokers)."""


class KeeperError(Exception):
    """A ZooKeeper result code other than the ones a caller handles (Kafka's KeeperException.create(code, path))."""

    def __init__(self, code: str, path: str | None = None) -> None:
        super().__init__(f"KeeperErrorCode = {code}" + (f" for {path}" if path else ""))
        self.code = code
        self.path = path


class ConfigError(Exception):
    """Kafka's ConfigException: a topic config value that does not parse."""


_BY_NAME: dict[str, type[Exception]] = {cls.__name__: cls for cls in (
    ControllerMovedError, StateChangeFailedError, IllegalStateError, KeeperError, ConfigError)}


def raised_error(e: BaseException) -> RaisedError:
    """The value of ``e`` that crosses between two actors (a controller procedure and the TopicDeletionActor)."""
    if isinstance(e, KeeperError):
        return RaisedError(KeeperError.__name__, str(e), e.code, e.path)
    return RaisedError(type(e).__name__, str(e))


def exception_of(error: RaisedError) -> Exception:
    """The exception ``raised_error`` carried: the same class for the controller's own, else a RuntimeError."""
    if error.kind == KeeperError.__name__:
        return KeeperError(error.code or "", error.path)
    cls = _BY_NAME.get(error.kind)
    return cls(error.text) if cls is not None else RuntimeError(f"{error.kind}: {error.text}")
