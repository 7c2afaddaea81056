"""kactor: Kafka 2.6's ZooKeeper-mode controller rebuilt as a thespian actor system."""

__version__ = "0.1.0"
