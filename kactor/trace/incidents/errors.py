"""What Kafka 2.6's error codes mean, split into the protocol's ordinary answers and the ones that need attention."""

from __future__ import annotations

# Kafka 2.6's meaning of the error codes a healthy cluster answers with (clients/.../protocol/Errors.java), and
# when kactor gives them.
EXPECTED_ERRORS: dict[str, str] = {
    "NOT_LEADER_OR_FOLLOWER": "this broker is not the partition's leader (or not a replica): a client or follower "
                              "asked before it learnt of an election",
    "FENCED_LEADER_EPOCH": "the leader epoch in the request is older than the broker's (KIP-320): a follower or "
                           "consumer still on the previous leader epoch after an election",
    "UNKNOWN_LEADER_EPOCH": "the leader epoch in the request is newer than the broker's (KIP-320): the broker has not "
                            "yet received the LeaderAndIsr of the election",
    "STALE_CONTROLLER_EPOCH": "the request came from a controller older than the one the broker knows: a deposed "
                              "controller's last requests after a failover",
    "STALE_BROKER_EPOCH": "the request names an earlier registration of the broker (it restarted)",
    "NOT_CONTROLLER": "this broker is not the controller (it moved)",
    "UNKNOWN_TOPIC_OR_PARTITION": "this broker does not host the partition (yet, or any more): around a creation, "
                                  "deletion or reassignment",
    "LEADER_NOT_AVAILABLE": "the partition has no leader: in the middle of a leadership election",
    "REPLICA_NOT_AVAILABLE": "the replica is not available on this broker",
    "OFFSET_NOT_AVAILABLE": "the leader's high watermark is not yet known after an election (KIP-207)",
    "OFFSET_OUT_OF_RANGE": "the fetch offset is outside the log: a consumer or follower resets or truncates",
    "NOT_COORDINATOR": "this broker is not the group's coordinator (it moved with __consumer_offsets' leader)",
    "COORDINATOR_LOAD_IN_PROGRESS": "the coordinator is loading the group's offsets after becoming leader",
    "COORDINATOR_NOT_AVAILABLE": "the group coordinator is not available (its partition has no leader)",
    "REBALANCE_IN_PROGRESS": "the group is rebalancing: members rejoin",
    "ILLEGAL_GENERATION": "the member's generation is older than the group's: it missed a rebalance",
    "UNKNOWN_MEMBER_ID": "the coordinator does not know the member (it left or timed out)",
    "MEMBER_ID_REQUIRED": "a new member must rejoin with the member id it was given (KIP-394)",
    "TOPIC_ALREADY_EXISTS": "the topic exists",
    "ELECTION_NOT_NEEDED": "the preferred replica already leads",
    "NO_REASSIGNMENT_IN_PROGRESS": "no reassignment to cancel",
    "FETCH_SESSION_ID_NOT_FOUND": "the fetch session was evicted or the broker restarted: the client starts a new one",
    "INVALID_FETCH_SESSION_EPOCH": "the fetch session's epoch is out of step: the client starts a new one",
    "CONCURRENT_TRANSACTIONS": "a previous transaction of the producer is still completing",
}


# Kafka 2.6's meaning of codes that say something went wrong (Errors.java's messages), for the ones most seen; any
# code not in EXPECTED_ERRORS needs attention, described here or not.
ATTENTION_ERRORS: dict[str, str] = {
    "UNKNOWN_SERVER_ERROR": "the server experienced an unexpected error when processing the request",
    "CORRUPT_MESSAGE": "the message failed its CRC checksum, exceeds the valid size, has a null key for a "
                       "compacted topic, or is otherwise corrupt",
    "KAFKA_STORAGE_ERROR": "disk error when trying to access a log file on the disk",
    "LOG_DIR_NOT_FOUND": "the user-specified log directory is not found in the broker config",
    "NOT_ENOUGH_REPLICAS": "messages are rejected since there are fewer in-sync replicas than required",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": "messages are written to the log, but to fewer in-sync replicas than "
                                        "required",
    "REQUEST_TIMED_OUT": "the request timed out",
    "MESSAGE_TOO_LARGE": "the request included a message larger than the max message size the server will accept",
    "RECORD_LIST_TOO_LARGE": "the request included message batch larger than the configured segment size",
    "INVALID_RECORD": "the record failed the broker's validation and was rejected",
    "OUT_OF_ORDER_SEQUENCE_NUMBER": "the broker received an out of order sequence number",
    "INVALID_PRODUCER_EPOCH": "the producer attempted to produce with an old epoch",
    "INVALID_REQUEST": "the request is malformed or has a field the broker does not understand",
    "UNSUPPORTED_VERSION": "the version of the API is not supported",
    "BROKER_NOT_AVAILABLE": "the broker is not available",
    "POLICY_VIOLATION": "the request parameters do not satisfy the configured policy",
}
