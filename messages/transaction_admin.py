"""KIP-664's admin requests (Kafka 3.0; as Kafka 3.6 serves them), beyond Kafka 2.6: DescribeProducers (61, the
partition leader's producer state), DescribeTransactions (65) and ListTransactions (66, the transaction coordinator's
cache), for ``kactor transactions`` and Kafka's own kafka-transactions.sh. One internal value per API, Kafka's field
names in snake case (core/api/{describe_producers,describe_transactions,list_transactions}.py convert)."""

from __future__ import annotations

from messages.common import Errors, TopicPartition
from messages.registry import message


@message
class DescribeProducersRequest:
    partitions: tuple[TopicPartition, ...]
    principal: str = "User:ANONYMOUS"


@message
class ProducerStateView:
    """DescribeProducersResponse's ProducerState: one producer of a partition as its producer state holds it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int  # -1: no transaction open


@message
class DescribeProducersPartition:
    tp: TopicPartition
    error: Errors
    active_producers: tuple[ProducerStateView, ...] = ()
    error_message: str | None = None


@message
class DescribeProducersResponse:
    partitions: tuple[DescribeProducersPartition, ...]


@message
class DescribeTransactionsRequest:
    transactional_ids: tuple[str, ...]
    principal: str = "User:ANONYMOUS"


@message
class TransactionDescription:
    """DescribeTransactionsResponse's TransactionState."""

    transactional_id: str
    error: Errors
    state: str = ""
    transaction_timeout_ms: int = 0
    transaction_start_time_ms: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    partitions: tuple[TopicPartition, ...] = ()


@message
class DescribeTransactionsResponse:
    transactions: tuple[TransactionDescription, ...]


@message
class ListTransactionsRequest:
    state_filters: tuple[str, ...] = ()
    producer_id_filters: tuple[int, ...] = ()
    principal: str = "User:ANONYMOUS"


@message
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@message
class ListTransactionsResponse:
    error: Errors
    unknown_state_filters: tuple[str, ...] = ()
    transactions: tuple[TransactionListing, ...] = ()
