"""The deterministic whole-cluster simulator (issue #28): models that stand in for the edges (ZooKeeper, ...)."""
