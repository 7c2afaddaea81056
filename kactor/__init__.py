"""kactor: Kafka 2.6's ZooKeeper-mode controller rebuilt as a thespian actor system."""

from messages.version import __version__

__all__ = ["__version__"]
