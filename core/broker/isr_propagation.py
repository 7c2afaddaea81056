"""ISR-change recording and propagation to the controller (Kafka ≤ 2.6: `ReplicaManager.recordIsrChange` /
`maybePropagateIsrChanges`; 2.7+ `ZkIsrManager`), and the log-dir failure notification.

The leader records every partition whose ISR it changed in ZooKeeper. A check scheduled every
`ISR_CHANGE_PROPAGATION_CHECK_MS` (2500 ms) publishes ONE ``/isr_change_notification/isr_change_<seq>`` znode
listing all recorded partitions when the set is non-empty and either no change was recorded in the last
`ISR_CHANGE_PROPAGATION_BLACKOUT_MS` (5000 ms) or the last publication is more than `ISR_CHANGE_PROPAGATION_INTERVAL_MS`
(60000 ms) ago. Time is always passed in (``now_ms``), never read.
"""

from __future__ import annotations

from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages.common import TopicPartition

ISR_CHANGE_PROPAGATION_CHECK_MS = 2500  # the "isr-change-propagation" task period
ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000  # ReplicaManager.IsrChangePropagationBlackOut
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 60000  # ReplicaManager.IsrChangePropagationInterval

def propagate_log_dir_event(broker_id: int) -> Proc[bool]:
    """KafkaZkClient.propagateLogDirEvent: create a persistent-sequential log_dir_event node; returns success."""
    return (yield from KafkaZkClient().propagate_log_dir_event(broker_id))


class IsrChangePropagation:
    """The broker's ``isrChangeSet`` with ``lastIsrChangeMs`` / ``lastIsrPropagationMs`` (both start at creation)."""

    def __init__(self, now_ms: float) -> None:
        self.isr_change_set: set[TopicPartition] = set()
        self.last_isr_change_ms = now_ms
        self.last_isr_propagation_ms = now_ms
        self.notifications_written = 0

    def record_isr_change(self, tp: TopicPartition, now_ms: float) -> None:
        """ReplicaManager.recordIsrChange."""
        self.isr_change_set.add(tp)
        self.last_isr_change_ms = now_ms

    def should_propagate(self, now_ms: float) -> bool:
        return bool(self.isr_change_set) and (
            self.last_isr_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now_ms
            or self.last_isr_propagation_ms + ISR_CHANGE_PROPAGATION_INTERVAL_MS < now_ms)

    def maybe_propagate_isr_changes(self, now_ms: float) -> Proc[tuple[TopicPartition, ...]]:
        """ReplicaManager.maybePropagateIsrChanges: returns the partitions published (empty if none / write failed).

        The set is cleared only once the znode exists (Kafka throws on a failed create and keeps the set).
        """
        if not self.should_propagate(now_ms):
            return ()
        published = tuple(sorted(self.isr_change_set))
        if not (yield from KafkaZkClient().propagate_isr_changes(published)):
            return ()
        self.isr_change_set.difference_update(published)
        self.last_isr_propagation_ms = now_ms
        self.notifications_written += 1
        return published
