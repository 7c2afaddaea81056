"""Kafka 2.6's ZooKeeper-era admin tools (TopicCommand, ConfigCommand, ReassignPartitionsCommand,
PreferredReplicaLeaderElectionCommand over ``kafka.zk.AdminZkClient``), re-implemented over kazoo, and the live view
of ``kactor describe``. The AdminZkClient they share with the broker's admin server, and the Kafka exceptions they
throw, are in zk_bridge/admin/.
"""
