"""The controller's functional core: ControllerContext, leader-election strategies, the controller → broker request
batch and the partition / replica state machines (Kafka 2.6's kafka.controller package, ZooKeeper mode).

Everything here is plain Python: no actors, sockets or ZooKeeper clients. Procedures that need ZooKeeper or send
requests are generators of effects (see `core.effects`).
"""
