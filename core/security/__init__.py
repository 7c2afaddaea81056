"""Kafka 2.6.3's security model as pure values and functions: ACLs and AclAuthorizer's decision (acl.py), their
ZooKeeper paths and payloads (acl_znodes.py, over zk_bridge's), the procedures that read and write them (acl_store.py),
and SCRAM credentials and the server side of the SCRAM exchange (scram.py). Nothing here is wired into the request
path yet (issue #29)."""
