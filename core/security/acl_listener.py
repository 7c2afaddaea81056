"""AclAuthorizer's cache on a broker: loaded from ZooKeeper at start (AclAuthorizer.configure) and kept current by
its two ZkNodeChangeNotificationListeners, on /kafka-acl-changes (literal patterns) and /kafka-acl-extended-changes
(prefixed), as Kafka 2.6.3 does.

`AclChangeListener.process_notifications` is one run of both listeners: read each change path's children (arming
its child watch), re-read the resource each new ``acl_changes_<seq>`` names (AclAuthorizer.processAclChangeNotification
→ updateCache), purge notifications older than 15 minutes; when the cache changed it yields a `Reconfigure` of the
whole state (`messages.security.AuthorizerChanged`) for the actors that authorize requests.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.controller.errors import KeeperError
from core.effects import Proc, Reconfigure
from core.security import acl_znodes
from core.security.acl import PatternType, ResourcePattern
from core.security.acl_store import VersionedAcls, ZkAclAuthorizer, get_versioned_acls
from core.security.authorizer import rows_of
from core.zk_client import KafkaZkClient
from messages.security import AuthorizerChanged
from messages.zk import OK, ZkOpResult
from protocol.zk import paths
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.authorizer")

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # ZkNodeChangeNotificationListener's changeExpirationMs
CHANGE_PATHS = {PatternType.LITERAL: paths.LiteralAclChangeZNode, PatternType.PREFIXED: paths.ExtendedAclChangeZNode}


class AclChangeWatch:
    """The listeners' ZNodeChildChangeHandlers: a read of a change path's children arms its child watch."""

    def watch_data(self, path: str) -> bool:
        return False

    def watch_children(self, path: str) -> bool:
        return path in CHANGE_PATHS.values()


def change_number(name: str) -> int:
    """ZkNodeChangeNotificationListener.changeNumber: ``acl_changes_0000000042`` → 42."""
    return int(name[len(paths.ACL_CHANGE_PREFIX):])


class AclChangeListener:
    """A broker's AclAuthorizer cache and its change listeners. ``clock`` gives milliseconds."""

    def __init__(self, super_users: str | None, allow_everyone_if_no_acl_found: bool,
                 clock: Callable[[], float], change_expiration_ms: int = CHANGE_EXPIRATION_MS) -> None:
        self.super_users = super_users
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self.clock = clock
        self.change_expiration_ms = change_expiration_ms
        self.authorizer = ZkAclAuthorizer(kzk=KafkaZkClient(AclChangeWatch()))
        self.last_executed_change = {t: -1 for t in CHANGE_PATHS}

    def state(self) -> AuthorizerChanged:
        cache = {p: v.acls for p, v in self.authorizer.cache.items()}
        return AuthorizerChanged(self.super_users, self.allow_everyone_if_no_acl_found, rows_of(cache))

    def startup(self) -> Proc[None]:
        """AclAuthorizer.configure: createAclPaths and loadCache, then both listeners' init (a first run, which
        arms the watches); the loaded cache goes out whatever the run finds."""
        yield from self.authorizer.load()
        yield from self.process_notifications(force=True)

    def process_notifications(self, force: bool = False) -> Proc[int]:
        """One run of both change listeners; returns how many notifications were processed."""
        processed = 0
        for pattern_type, root in CHANGE_PATHS.items():
            processed += yield from self._process(pattern_type, root)
        if processed or force:
            yield Reconfigure(self.state())
        return processed

    def _process(self, pattern_type: PatternType, root: str) -> Proc[int]:
        kzk = self.authorizer.kzk
        children = yield from kzk.get_children_raw(root)
        if children.code != OK:
            log.error("Error while processing notification change for path = %s: %s", root, children.code)
            return 0
        notifications = sorted(children.children or ())
        new = [n for n in notifications if change_number(n) > self.last_executed_change[pattern_type]]
        now = self.clock()
        if new:
            results = yield from kzk.get_data_raw([f"{root}/{n}" for n in new])
            for name, r in zip(new, results, strict=True):
                yield from self._process_notification(pattern_type, f"{root}/{name}", r)
                self.last_executed_change[pattern_type] = change_number(name)
        node_paths = [f"{root}/{n}" for n in notifications]
        stats = (yield from kzk.exists_raw(node_paths)) if node_paths else ()
        expired = [p for p, s in zip(node_paths, stats, strict=True)
                   if s.code == OK and s.stat is not None and now - s.stat.ctime > self.change_expiration_ms]
        if expired:
            yield from kzk.delete_paths(expired)
        return len(new)

    def _process_notification(self, pattern_type: PatternType, path: str, r: ZkOpResult) -> Proc[None]:
        """AclChangedNotificationHandler.processNotification → AclAuthorizer.processAclChangeNotification: the
        resource's ACLs re-read; a notification that cannot be read is logged and skipped."""
        if r.code != OK or r.data is None:
            log.warning("read null data from %s", path)
            return
        try:
            if pattern_type is PatternType.LITERAL:
                pattern = acl_znodes.decode_literal_acl_change(r.data)
            else:
                pattern = acl_znodes.decode_extended_acl_change(r.data)
            versioned = yield from get_versioned_acls(pattern, self.authorizer.kzk)
        except (ValueError, ZnodeDecodeError, KeeperError) as e:
            log.error("error processing ACL change notification %s from %s: %s", r.data, path, e)
            return
        self._update_cache(pattern, versioned)

    def _update_cache(self, pattern: ResourcePattern, versioned: VersionedAcls) -> None:
        """AclAuthorizer.updateCache: a resource without ACLs leaves the cache."""
        if versioned.acls:
            self.authorizer.cache[pattern] = versioned
        else:
            self.authorizer.cache.pop(pattern, None)
