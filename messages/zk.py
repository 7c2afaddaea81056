"""ZooKeeper operations and their results, as values.

Actors never call kazoo. They send a `ZkRequest` (a batch of these ops) to the ZkBridgeActor, whose edge executes
the ops pipelined with kazoo and answers with one `ZkResponse`. Watches fire as `ZkWatchEvent`, session changes as
`ZkSessionEvent`. Znode data is carried as text (Kafka's znodes hold UTF-8 JSON or decimal text); None = no data.
"""

from __future__ import annotations

from messages.registry import message

# Result codes, named as ZooKeeper's KeeperException.Code (plus CONTROLLER_MOVED for a failed epoch fence).
OK = "OK"
NONODE = "NONODE"
NODEEXISTS = "NODEEXISTS"
BADVERSION = "BADVERSION"
NOTEMPTY = "NOTEMPTY"
NOAUTH = "NOAUTH"  # the znode's ACL refuses this session (zookeeper.set.acl: a client without the brokers' digest)
CONNECTIONLOSS = "CONNECTIONLOSS"
SESSIONEXPIRED = "SESSIONEXPIRED"
CONTROLLER_MOVED = "CONTROLLER_MOVED"
RUNTIMEINCONSISTENCY = "RUNTIMEINCONSISTENCY"
ERROR = "ERROR"


@message
class ZStat:
    """The parts of a ZooKeeper Stat that Kafka uses: data version, czxid (broker epoch), ephemeral owner, ctime."""

    version: int
    czxid: int = 0
    ephemeral_owner: int = 0
    ctime: int = 0
    num_children: int = 0


@message
class GetData:
    path: str
    watch: bool = False


@message
class GetChildren:
    path: str
    watch: bool = False


@message
class Exists:
    path: str
    watch: bool = False


@message
class Create:
    path: str
    data: str | None = None
    ephemeral: bool = False
    sequential: bool = False
    make_parents: bool = False


@message
class SetData:
    path: str
    data: str
    version: int = -1


@message
class Delete:
    path: str
    version: int = -1
    recursive: bool = False


@message
class Check:
    path: str
    version: int


@message
class Multi:
    """An atomic ZooKeeper transaction of Create / SetData / Delete / Check ops."""

    ops: tuple


@message
class RegisterBroker:
    """Kafka's checked-ephemeral create of /brokers/ids/<id> (KAFKA-7165).

    The result's stat.czxid is the broker epoch.
    """

    path: str
    data: str


ZkOp = GetData | GetChildren | Exists | Create | SetData | Delete | Check | Multi | RegisterBroker


@message
class ZkOpResult:
    """The result of one op: code, and data / stat / children / created path where the op yields them.

    For a `Multi`, ``results`` holds one ZkOpResult per inner op.
    """

    code: str
    data: str | None = None
    stat: ZStat | None = None
    children: tuple[str, ...] | None = None
    path: str | None = None
    results: tuple | None = None

    @property
    def ok(self) -> bool:
        return self.code == OK


@message
class ZkBatch:
    """What the functional core yields: ops to run pipelined, each fenced by /controller_epoch's version if ≥ 0.

    A fenced op runs as a multi [check(/controller_epoch, fence_version), op]; a failed check is reported as
    CONTROLLER_MOVED for that op (Kafka's ControllerMovedException).
    """

    ops: tuple
    fence_version: int = -1


@message
class ZkRequest:
    """An actor's request to the ZkBridgeActor; answered by a ZkResponse with the same request_id to ``reply_to``."""

    request_id: int
    batch: ZkBatch
    reply_to: str


@message
class ZkResponse:
    request_id: int
    results: tuple[ZkOpResult, ...]


@message
class ZkWatchEvent:
    """A one-shot watch fired. kind: CREATED, DELETED, CHANGED (data) or CHILD (children)."""

    path: str
    kind: str


@message
class ZkSessionEvent:
    """The ZooKeeper session changed. state: CONNECTED, SUSPENDED, EXPIRED (Kafka's beforeInitializingSession)
    or REESTABLISHED (a new session after expiry: Kafka's afterInitializingSession)."""

    state: str
    session_id: int = 0
