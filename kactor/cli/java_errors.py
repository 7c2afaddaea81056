# ruff: noqa: E501 (a data table: one line per error code)
"""Kafka 2.6.3's error codes as its Java clients turn them into exceptions (``o.a.k.common.protocol.Errors``): the
exception class and its default message, used when the broker's answer carries no message of its own. Kafka's tools
print these exceptions (``Throwable.toString``); kactor's Kafka-protocol tools print the same text. Generated from
Errors.java at tag 2.6.3."""

from __future__ import annotations

JAVA_ERRORS: dict[int, tuple[str, str | None]] = {
    1: ("OffsetOutOfRangeException",
         'The requested offset is not within the range of offsets maintained by the server.'),  # OFFSET_OUT_OF_RANGE
    2: ("CorruptRecordException",
         'This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.'),  # CORRUPT_MESSAGE
    3: ("UnknownTopicOrPartitionException",
         'This server does not host this topic-partition.'),  # UNKNOWN_TOPIC_OR_PARTITION
    4: ("InvalidFetchSizeException", 'The requested fetch size is invalid.'),  # INVALID_FETCH_SIZE
    5: ("LeaderNotAvailableException",
         'There is no leader for this topic-partition as we are in the middle of a leadership election.'),  # LEADER_NOT_AVAILABLE
    6: ("NotLeaderOrFollowerException",
         'For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.'),  # NOT_LEADER_OR_FOLLOWER
    7: ("TimeoutException", 'The request timed out.'),  # REQUEST_TIMED_OUT
    8: ("BrokerNotAvailableException", 'The broker is not available.'),  # BROKER_NOT_AVAILABLE
    9: ("ReplicaNotAvailableException",
         'The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.'),  # REPLICA_NOT_AVAILABLE
    10: ("RecordTooLargeException",
         'The request included a message larger than the max message size the server will accept.'),  # MESSAGE_TOO_LARGE
    11: ("ControllerMovedException", 'The controller moved to another broker.'),  # STALE_CONTROLLER_EPOCH
    12: ("OffsetMetadataTooLarge",
         'The metadata field of the offset request was too large.'),  # OFFSET_METADATA_TOO_LARGE
    13: ("NetworkException", 'The server disconnected before a response was received.'),  # NETWORK_EXCEPTION
    14: ("CoordinatorLoadInProgressException",
         "The coordinator is loading and hence can't process requests."),  # COORDINATOR_LOAD_IN_PROGRESS
    15: ("CoordinatorNotAvailableException", 'The coordinator is not available.'),  # COORDINATOR_NOT_AVAILABLE
    16: ("NotCoordinatorException", 'This is not the correct coordinator.'),  # NOT_COORDINATOR
    17: ("InvalidTopicException",
         'The request attempted to perform an operation on an invalid topic.'),  # INVALID_TOPIC_EXCEPTION
    18: ("RecordBatchTooLargeException",
         'The request included message batch larger than the configured segment size on the server.'),  # RECORD_LIST_TOO_LARGE
    19: ("NotEnoughReplicasException",
         'Messages are rejected since there are fewer in-sync replicas than required.'),  # NOT_ENOUGH_REPLICAS
    20: ("NotEnoughReplicasAfterAppendException",
         'Messages are written to the log, but to fewer in-sync replicas than required.'),  # NOT_ENOUGH_REPLICAS_AFTER_APPEND
    21: ("InvalidRequiredAcksException",
         'Produce request specified an invalid value for required acks.'),  # INVALID_REQUIRED_ACKS
    22: ("IllegalGenerationException", 'Specified group generation id is not valid.'),  # ILLEGAL_GENERATION
    23: ("InconsistentGroupProtocolException",
         "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list."),  # INCONSISTENT_GROUP_PROTOCOL
    24: ("InvalidGroupIdException", 'The configured groupId is invalid.'),  # INVALID_GROUP_ID
    25: ("UnknownMemberIdException", 'The coordinator is not aware of this member.'),  # UNKNOWN_MEMBER_ID
    26: ("InvalidSessionTimeoutException",
         'The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).'),  # INVALID_SESSION_TIMEOUT
    27: ("RebalanceInProgressException", 'The group is rebalancing, so a rejoin is needed.'),  # REBALANCE_IN_PROGRESS
    28: ("InvalidCommitOffsetSizeException",
         'The committing offset data size is not valid.'),  # INVALID_COMMIT_OFFSET_SIZE
    29: ("TopicAuthorizationException", 'Topic authorization failed.'),  # TOPIC_AUTHORIZATION_FAILED
    30: ("GroupAuthorizationException", 'Group authorization failed.'),  # GROUP_AUTHORIZATION_FAILED
    31: ("ClusterAuthorizationException", 'Cluster authorization failed.'),  # CLUSTER_AUTHORIZATION_FAILED
    32: ("InvalidTimestampException", 'The timestamp of the message is out of acceptable range.'),  # INVALID_TIMESTAMP
    33: ("UnsupportedSaslMechanismException",
         'The broker does not support the requested SASL mechanism.'),  # UNSUPPORTED_SASL_MECHANISM
    34: ("IllegalSaslStateException", 'Request is not valid given the current SASL state.'),  # ILLEGAL_SASL_STATE
    35: ("UnsupportedVersionException", 'The version of API is not supported.'),  # UNSUPPORTED_VERSION
    36: ("TopicExistsException", 'Topic with this name already exists.'),  # TOPIC_ALREADY_EXISTS
    37: ("InvalidPartitionsException", 'Number of partitions is below 1.'),  # INVALID_PARTITIONS
    38: ("InvalidReplicationFactorException",
         'Replication factor is below 1 or larger than the number of available brokers.'),  # INVALID_REPLICATION_FACTOR
    39: ("InvalidReplicaAssignmentException", 'Replica assignment is invalid.'),  # INVALID_REPLICA_ASSIGNMENT
    40: ("InvalidConfigurationException", 'Configuration is invalid.'),  # INVALID_CONFIG
    41: ("NotControllerException", 'This is not the correct controller for this cluster.'),  # NOT_CONTROLLER
    42: ("InvalidRequestException",
         'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.'),  # INVALID_REQUEST
    43: ("UnsupportedForMessageFormatException",
         'The message format version on the broker does not support the request.'),  # UNSUPPORTED_FOR_MESSAGE_FORMAT
    44: ("PolicyViolationException", 'Request parameters do not satisfy the configured policy.'),  # POLICY_VIOLATION
    45: ("OutOfOrderSequenceException",
         'The broker received an out of order sequence number.'),  # OUT_OF_ORDER_SEQUENCE_NUMBER
    46: ("DuplicateSequenceException", 'The broker received a duplicate sequence number.'),  # DUPLICATE_SEQUENCE_NUMBER
    47: ("ProducerFencedException",
         "Producer attempted an operation with an old epoch. Either there is a newer producer with the same transactionalId, or the producer's transaction has been expired by the broker."),  # INVALID_PRODUCER_EPOCH
    48: ("InvalidTxnStateException",
         'The producer attempted a transactional operation in an invalid state.'),  # INVALID_TXN_STATE
    49: ("InvalidPidMappingException",
         'The producer attempted to use a producer id which is not currently assigned to its transactional id.'),  # INVALID_PRODUCER_ID_MAPPING
    50: ("InvalidTxnTimeoutException",
         'The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).'),  # INVALID_TRANSACTION_TIMEOUT
    51: ("ConcurrentTransactionsException",
         'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.'),  # CONCURRENT_TRANSACTIONS
    52: ("TransactionCoordinatorFencedException",
         'Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.'),  # TRANSACTION_COORDINATOR_FENCED
    53: ("TransactionalIdAuthorizationException",
         'Transactional Id authorization failed.'),  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    54: ("SecurityDisabledException", 'Security features are disabled.'),  # SECURITY_DISABLED
    55: ("OperationNotAttemptedException",
         'The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.'),  # OPERATION_NOT_ATTEMPTED
    56: ("KafkaStorageException", 'Disk error when trying to access log file on the disk.'),  # KAFKA_STORAGE_ERROR
    57: ("LogDirNotFoundException",
         'The user-specified log directory is not found in the broker config.'),  # LOG_DIR_NOT_FOUND
    58: ("SaslAuthenticationException", 'SASL Authentication failed.'),  # SASL_AUTHENTICATION_FAILED
    59: ("UnknownProducerIdException",
         "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception."),  # UNKNOWN_PRODUCER_ID
    60: ("ReassignmentInProgressException", 'A partition reassignment is in progress.'),  # REASSIGNMENT_IN_PROGRESS
    61: ("DelegationTokenDisabledException",
         'Delegation Token feature is not enabled.'),  # DELEGATION_TOKEN_AUTH_DISABLED
    62: ("DelegationTokenNotFoundException", 'Delegation Token is not found on server.'),  # DELEGATION_TOKEN_NOT_FOUND
    63: ("DelegationTokenOwnerMismatchException",
         'Specified Principal is not valid Owner/Renewer.'),  # DELEGATION_TOKEN_OWNER_MISMATCH
    64: ("UnsupportedByAuthenticationException",
         'Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.'),  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    65: ("DelegationTokenAuthorizationException",
         'Delegation Token authorization failed.'),  # DELEGATION_TOKEN_AUTHORIZATION_FAILED
    66: ("DelegationTokenExpiredException", 'Delegation Token is expired.'),  # DELEGATION_TOKEN_EXPIRED
    67: ("InvalidPrincipalTypeException", 'Supplied principalType is not supported.'),  # INVALID_PRINCIPAL_TYPE
    68: ("GroupNotEmptyException", 'The group is not empty.'),  # NON_EMPTY_GROUP
    69: ("GroupIdNotFoundException", 'The group id does not exist.'),  # GROUP_ID_NOT_FOUND
    70: ("FetchSessionIdNotFoundException", 'The fetch session ID was not found.'),  # FETCH_SESSION_ID_NOT_FOUND
    71: ("InvalidFetchSessionEpochException", 'The fetch session epoch is invalid.'),  # INVALID_FETCH_SESSION_EPOCH
    72: ("ListenerNotFoundException",
         'There is no listener on the leader broker that matches the listener on which metadata request was processed.'),  # LISTENER_NOT_FOUND
    73: ("TopicDeletionDisabledException", 'Topic deletion is disabled.'),  # TOPIC_DELETION_DISABLED
    74: ("FencedLeaderEpochException",
         'The leader epoch in the request is older than the epoch on the broker.'),  # FENCED_LEADER_EPOCH
    75: ("UnknownLeaderEpochException",
         'The leader epoch in the request is newer than the epoch on the broker.'),  # UNKNOWN_LEADER_EPOCH
    76: ("UnsupportedCompressionTypeException",
         'The requesting client does not support the compression type of given partition.'),  # UNSUPPORTED_COMPRESSION_TYPE
    77: ("StaleBrokerEpochException", 'Broker epoch has changed.'),  # STALE_BROKER_EPOCH
    78: ("OffsetNotAvailableException",
         'The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.'),  # OFFSET_NOT_AVAILABLE
    79: ("MemberIdRequiredException",
         'The group member needs to have a valid member id before actually entering a consumer group.'),  # MEMBER_ID_REQUIRED
    80: ("PreferredLeaderNotAvailableException",
         'The preferred leader was not available.'),  # PREFERRED_LEADER_NOT_AVAILABLE
    81: ("GroupMaxSizeReachedException", 'The consumer group has reached its max size.'),  # GROUP_MAX_SIZE_REACHED
    82: ("FencedInstanceIdException",
         'The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.'),  # FENCED_INSTANCE_ID
    83: ("EligibleLeadersNotAvailableException",
         'Eligible topic partition leaders are not available.'),  # ELIGIBLE_LEADERS_NOT_AVAILABLE
    84: ("ElectionNotNeededException", 'Leader election not needed for topic partition.'),  # ELECTION_NOT_NEEDED
    85: ("NoReassignmentInProgressException",
         'No partition reassignment is in progress.'),  # NO_REASSIGNMENT_IN_PROGRESS
    86: ("GroupSubscribedToTopicException",
         'Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.'),  # GROUP_SUBSCRIBED_TO_TOPIC
    87: ("InvalidRecordException",
         'This record has failed the validation on broker and hence will be rejected.'),  # INVALID_RECORD
    88: ("UnstableOffsetCommitException",
         'There are unstable offsets that need to be cleared.'),  # UNSTABLE_OFFSET_COMMIT
}


def java_exception_text(code: int, message: str | None = None) -> str:
    """``org.apache.kafka.common.errors.<Class>: <message>`` (Errors.exception(message).toString())."""
    cls, default = JAVA_ERRORS.get(code, ("UnknownServerException", f"Unknown error code {code}"))
    text = message if message is not None else default
    return f"org.apache.kafka.common.errors.{cls}" + (f": {text}" if text is not None else "")
