"""The ZooKeeper edge: Kafka's znode paths and payloads, a real ZooKeeper server for tests and the CLI, and the
non-blocking executor behind the ZkBridgeActor. Nothing here is an actor; actors reach ZooKeeper only by messages."""
