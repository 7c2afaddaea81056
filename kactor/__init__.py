"""kactor: Kafka 2.6's ZooKeeper-mode controller rebuilt as a thespian actor system."""

from kactor import attrs_code_cache

# before any class is defined: every broker, command and simulator worker starts through this package
attrs_code_cache.install()

from messages.version import __version__  # noqa: E402

__all__ = ["__version__"]
