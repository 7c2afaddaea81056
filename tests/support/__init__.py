"""What the unit tests share: the one in-memory ZooKeeper model (fake_zookeeper), the controller harnesses
(controller, controller_events) and the broker core's request builders (broker). Imported as ``tests.support.*``."""
