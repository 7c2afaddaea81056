"""Topic auto-creation's ZooKeeper writes (KafkaApis.createTopic / createInternalTopic), as an edge handler.

The Metadata answer decides (core/api/metadata.py: LEADER_NOT_AVAILABLE, the topic listed in the response's
``create_topics``); after the answer is sent the transport hands that list here, on the handler's own thread, so no
actor waits on ZooKeeper. A topic is created as 2.6's AdminZkClient.createTopic does (rack-aware mode Safe, a random
start index); ``__consumer_offsets`` as the group coordinator creates it (its offsets.topic.* settings, and only once
offsets.topic.replication.factor brokers are alive, as 2.6's createInternalTopic), ``__transaction_state`` as the
transaction coordinator's FindCoordinator creates it (transaction.state.log.*). A topic
that exists by now (another broker, or an earlier request, created it) is fine, as in 2.6; any other failure is
logged, and the client's next Metadata request meets the same decision again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from core.coordinator.group.find_coordinator import create_internal_topic, create_offsets_topic, transaction_topic
from core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from core.zk_client import KafkaZkClient
from messages.group import GroupCoordinatorConfig
from messages.metadata import CreatableTopic
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import TransactionCoordinatorConfig
from zk_bridge.admin import TopicExistsException
from zk_bridge.admin.admin_zk import RACK_AWARE_SAFE, AdminZkClient
from zk_bridge.blocking import BlockingZk

log = logging.getLogger("kactor.auto_topic_creation")


class AutoTopicCreation:
    """The "auto_create" edge handler of a broker: ``handle(ctx, topics)`` creates each topic."""

    def __init__(self, admin: AdminZkClient, group_config: GroupCoordinatorConfig,
                 txn_config: TransactionCoordinatorConfig | None = None) -> None:
        self.admin = admin
        self.group_config = group_config
        self.txn_config = txn_config or TransactionCoordinatorConfig()

    def handle(self, ctx: Any, topics: Sequence[CreatableTopic]) -> None:
        for t in topics:
            self.create(t)

    def create(self, t: CreatableTopic) -> None:
        """KafkaApis.createTopic (createInternalTopic for ``__consumer_offsets`` and ``__transaction_state``)."""
        try:
            if t.name == GROUP_METADATA_TOPIC_NAME:
                with BlockingZk(self.admin.zk) as zk:  # the group coordinator's own procedure, on this session
                    zk.run(create_offsets_topic(KafkaZkClient(), self.group_config))
                return
            if t.name == TRANSACTION_STATE_TOPIC_NAME:
                with BlockingZk(self.admin.zk) as zk:  # FindCoordinator's procedure for the transaction log
                    zk.run(create_internal_topic(KafkaZkClient(), transaction_topic(self.txn_config)))
                return
            self.admin.create_topic(t.name, t.num_partitions, t.replication_factor, {}, RACK_AWARE_SAFE)
            log.info("Auto creation of topic %s with %d partitions and replication factor %d is successful",
                     t.name, t.num_partitions, t.replication_factor)
        except TopicExistsException:
            log.debug("topic %s exists already (possibly another broker created it)", t.name)
        except Exception as e:  # noqa: BLE001 - 2.6's "catch all to prevent unhandled errors"
            log.warning("Error while creating topic %s: %s", t.name, e)
