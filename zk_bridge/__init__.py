"""The ZooKeeper edge: a real ZooKeeper server for tests and the CLI, and the non-blocking executor behind the
ZkBridgeActor. Kafka's znode paths and payloads are vocabulary, in ``protocol.zk``. Nothing here is an actor; actors
reach ZooKeeper only by messages."""
