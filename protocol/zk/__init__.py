"""Kafka's ZooKeeper data (``kafka.zk.ZkData``): every znode path (`paths`) and every payload's JSON (`znodes`), the
vocabulary shared by the controller, the brokers and the tools. The ZooKeeper edge that reads and writes them is
``zk_bridge``."""
