"""The functional core: Kafka's controller and broker-side decisions as plain Python over a context.

No actor, socket, thread or ZooKeeper client lives here. Procedures that need ZooKeeper are generators: they
``yield`` effect values (see `core.effects`) and receive the result of each, so the same code runs under an actor
(which turns each effect into a message), under a unit test (which answers from an in-memory ZooKeeper model), and
under trace replay (which answers from the recorded responses).
"""
