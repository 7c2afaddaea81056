"""AclAuthorizer's ZooKeeper side as procedures (generators of effects, see core/effects.py) on KafkaZkClient's ACL
methods (core/zk_client.py): create the ACL paths, load every resource's ACLs into a cache, and add or remove ACLs with
conditional writes and a change notification, as Kafka 2.6.3's ``AclAuthorizer`` does.

`ZkAclAuthorizer` holds the cache (resource pattern → `VersionedAcls`) the way AclAuthorizer does; `kactor acls`
drives it synchronously (zk_bridge.blocking), and the broker's authorizer will drive it from an actor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

import attrs

from core.controller.errors import KeeperError
from core.effects import Proc
from core.security import acl_znodes
from core.security.acl import (
    RESOURCE_TYPES,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    in_cache_order,
    validate_acl_binding,
)
from core.security.acl_znodes import STORE_PATTERN_TYPES
from core.zk_client import KafkaZkClient
from messages.zk import BADVERSION, NODEEXISTS, NONODE, OK, ZkOpResult
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger(__name__)

UNKNOWN_VERSION = -2  # ZkVersion.UnknownVersion
MAX_UPDATE_RETRIES = 10  # AclAuthorizer.maxUpdateRetries


@attrs.frozen(slots=True)
class VersionedAcls:
    """AclAuthorizer.VersionedAcls: a resource's entries and the zkVersion of its znode (UNKNOWN_VERSION: none)."""

    acls: tuple[AccessControlEntry, ...]
    zk_version: int

    @property
    def exists(self) -> bool:
        return self.zk_version != UNKNOWN_VERSION


NO_ACLS = VersionedAcls((), UNKNOWN_VERSION)


class AclUpdateError(Exception):
    """AclAuthorizer's IllegalStateException after ``maxUpdateRetries`` failed conditional writes."""


def get_versioned_acls(pattern: ResourcePattern, kzk: KafkaZkClient | None = None) -> Proc[VersionedAcls]:
    """KafkaZkClient.getVersionedAclsForResource."""
    path = acl_znodes.resource_path(pattern)
    (r,) = yield from (kzk or KafkaZkClient()).get_data_raw((path,))
    return _versioned(r, path)


def _versioned(r: ZkOpResult, path: str) -> VersionedAcls:
    if r.code == NONODE:
        return NO_ACLS
    if r.code != OK:
        raise KeeperError(r.code, path)
    return VersionedAcls(acl_znodes.decode_acls(r.data, path), r.stat.version)


def load_acls(kzk: KafkaZkClient | None = None) -> Proc[dict[ResourcePattern, VersionedAcls]]:
    """AclAuthorizer.loadCache: every resource of both stores with its ACLs. A resource type Kafka does not know is
    skipped with a warning ("Ignoring unknown ResourceType"); an empty resource node is left out of the cache."""
    kzk = kzk or KafkaZkClient()
    cache: dict[ResourcePattern, VersionedAcls] = {}
    for pattern_type in STORE_PATTERN_TYPES:
        for type_name in (yield from kzk.get_children(acl_znodes.store_path(pattern_type))):
            resource_type = ResourceType.from_name(type_name)
            if resource_type not in RESOURCE_TYPES:
                log.warning("Ignoring unknown ResourceType: %s", type_name)
                continue
            names = yield from kzk.get_children(acl_znodes.resource_type_path(pattern_type, resource_type))
            patterns = [ResourcePattern(resource_type, n, pattern_type) for n in names]
            node_paths = [acl_znodes.resource_path(p) for p in patterns]
            results = (yield from kzk.get_data_raw(node_paths)) if node_paths else ()
            for pattern, path, r in zip(patterns, node_paths, results, strict=True):
                versioned = _versioned(r, path)
                if versioned.acls:
                    cache[pattern] = versioned
    return cache


def filter_to_resources(pattern_filter: ResourcePatternFilter) -> list[ResourcePattern]:
    """AclAuthorizer.filterToResources: the patterns a filter that matches at most one resource names."""
    assert pattern_filter.name is not None
    if pattern_filter.pattern_type in STORE_PATTERN_TYPES:
        return [ResourcePattern(pattern_filter.resource_type, pattern_filter.name, pattern_filter.pattern_type)]
    if pattern_filter.pattern_type is PatternType.ANY:
        return [ResourcePattern(pattern_filter.resource_type, pattern_filter.name, t) for t in STORE_PATTERN_TYPES]
    raise ValueError(f"Cannot determine matching resources for patternType {pattern_filter}")


@attrs.frozen(slots=True)
class DeletedBinding:
    """AclBindingDeleteResult: a binding a filter removed, or the error that kept it."""

    binding: AclBinding
    error: Exception | None = None


class ZkAclAuthorizer:
    """AclAuthorizer's cache and its ZooKeeper writes. ``cache`` is filled by `load` (AclAuthorizer.configure's
    loadCache) and kept current by this authorizer's own writes."""

    def __init__(self, max_update_retries: int = MAX_UPDATE_RETRIES, kzk: KafkaZkClient | None = None) -> None:
        self.cache: dict[ResourcePattern, VersionedAcls] = {}
        self.max_update_retries = max_update_retries
        self.kzk = kzk or KafkaZkClient()

    def load(self) -> Proc[None]:
        """AclAuthorizer.configure: createAclPaths, then loadCache."""
        yield from self.kzk.create_acl_paths()
        self.cache = yield from load_acls(self.kzk)

    # -- reads ---------------------------------------------------------------------------------------------------------
    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """AclAuthorizer.acls: the cached bindings the filter matches, in the cache's order."""
        return [AclBinding(pattern, entry) for pattern in in_cache_order(self.cache)
                for entry in self.cache[pattern].acls if binding_filter.matches(AclBinding(pattern, entry))]

    # -- writes --------------------------------------------------------------------------------------------------------
    def update_resource_acls(self, pattern: ResourcePattern,
                             new_acls: Callable[[tuple[AccessControlEntry, ...]], tuple[AccessControlEntry, ...]]
                             ) -> Proc[bool]:
        """AclAuthorizer.updateResourceAcls: compute the resource's new entries from its current ones, then create,
        conditionally set (at the zkVersion read) or conditionally delete (no entry left) its znode; a lost race
        re-reads the znode and tries again, up to ``max_update_retries`` times (AclUpdateError after). A change
        of the entries writes a change notification. Returns whether the entries changed."""
        kzk = self.kzk
        current = self.cache[pattern] if pattern in self.cache else (yield from get_versioned_acls(pattern, kzk))
        retries = 0
        while True:
            acls = new_acls(current.acls)
            if not acls:
                r = yield from kzk.conditional_delete_acls_for_resource(pattern, current.zk_version)
                done = r.code in (OK, NONODE)
            elif current.exists:
                r = yield from kzk.conditional_set_acls_for_resource(pattern, acls, current.zk_version)
                done = r.code == OK
            else:
                r = yield from kzk.create_acls_for_resource_if_not_exists(pattern, acls)
                done = r.code == OK
            if done:
                break
            if r.code not in (BADVERSION, NONODE, NODEEXISTS):
                raise KeeperError(r.code, acl_znodes.resource_path(pattern))
            retries += 1
            if retries > self.max_update_retries:
                raise AclUpdateError(f"Failed to update ACLs for {pattern} after trying a maximum of "
                                     f"{self.max_update_retries} times")
            current = yield from get_versioned_acls(pattern, kzk)
        # a set answers the new version, a create makes version 0, a delete leaves none
        if acls:
            self.cache[pattern] = VersionedAcls(acls, r.stat.version if current.exists else 0)
        else:
            self.cache.pop(pattern, None)
        if set(acls) == set(current.acls):
            return False
        yield from kzk.create_acl_change_notification(pattern)
        return True

    def create_acls(self, bindings: Sequence[AclBinding]) -> Proc[list[Exception | None]]:
        """AclAuthorizer.createAcls: each binding validated (a refused one gets its ValueError), then one update per
        resource adding its entries after the current ones. One result per binding, None for success."""
        results: list[Exception | None] = [None] * len(bindings)
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for i, binding in enumerate(bindings):
            try:
                validate_acl_binding(binding)
            except ValueError as e:
                results[i] = e
                continue
            by_pattern.setdefault(binding.pattern, []).append(i)
        for pattern, indexes in by_pattern.items():
            added = tuple(bindings[i].entry for i in indexes)
            try:
                yield from self.update_resource_acls(pattern, lambda cur, added=added: _union(cur, added))
            except (AclUpdateError, KeeperError, ZnodeDecodeError) as e:
                for i in indexes:
                    results[i] = e
        return results

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> Proc[list[list[DeletedBinding]]]:
        """AclAuthorizer.deleteAcls: every cached resource, and each resource a filter names exactly, that some
        filter's pattern matches has the entries those filters match removed. One list per filter of the bindings it
        removed (a binding is credited to the first filter that matched it)."""
        candidates = list(self.cache)
        for f in filters:
            if f.pattern_filter.matches_at_most_one:
                candidates.extend(p for p in filter_to_resources(f.pattern_filter) if p not in candidates)
        deleted: dict[AclBinding, int] = {}
        errors: dict[AclBinding, Exception] = {}
        for pattern in in_cache_order(dict.fromkeys(candidates)):
            matching = [(f, i) for i, f in enumerate(filters) if f.pattern_filter.matches(pattern)]
            if not matching:
                continue
            being_deleted: dict[AclBinding, int] = {}

            def remove(current: tuple[AccessControlEntry, ...], pattern: ResourcePattern = pattern,
                       matching: list = matching, being_deleted: dict = being_deleted
                       ) -> tuple[AccessControlEntry, ...]:
                kept = []
                for entry in current:
                    hit = next((i for f, i in matching if f.entry_filter.matches(entry)), None)
                    if hit is None:
                        kept.append(entry)
                    else:
                        binding = AclBinding(pattern, entry)
                        deleted.setdefault(binding, hit)
                        being_deleted.setdefault(binding, hit)
                return tuple(kept)

            try:
                yield from self.update_resource_acls(pattern, remove)
            except (AclUpdateError, KeeperError, ZnodeDecodeError) as e:
                for binding in being_deleted:
                    errors.setdefault(binding, e)
        out: list[list[DeletedBinding]] = [[] for _ in filters]
        for binding, i in deleted.items():
            out[i].append(DeletedBinding(binding, errors.get(binding)))
        return out


def _union(current: Iterable[AccessControlEntry], added: Iterable[AccessControlEntry]
           ) -> tuple[AccessControlEntry, ...]:
    """``currentAcls ++ newAcls`` keeping the znode's order, new entries last."""
    return tuple(dict.fromkeys((*current, *added)))
