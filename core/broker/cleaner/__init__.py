"""Kafka 2.6's log cleaner (kafka.log.LogCleaner): compaction of ``cleanup.policy=compact`` logs.

``offset_map`` (SkimpyOffsetMap), ``cleaner`` (Cleaner: the offset map, grouping, recopying into ``.cleaned``
segments), ``transactions`` (CleanedTransactionMetadata: what of a transaction a cleaning drops), ``manager``
(LogCleanerManager: which log, which section, the ``cleaner-offset-checkpoint``), ``swap`` (Log.replaceSegments in
the shard that owns the log). The threads that run it are ``edges/log_cleaner.py``.
"""
