"""The broker side of Kafka 2.6's replication protocol (ZooKeeper mode) as a pure functional core.

`replica_manager.ReplicaManager` (controller requests, replication, ISR maintenance, checkpoints),
`partition.Partition` (leadership, follower bookkeeping, ISR, high watermark), `metadata_cache.MetadataCache`,
`log.Log` / `log.LogManager` (the local log), `isr_propagation` (ISR-change and log-dir notifications).
"""
