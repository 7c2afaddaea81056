"""The composition of a simulated broker for `kactor sim` (sim/runtime.py's ``Boot``): what `kactor.broker_process`
builds for a live one, less its sockets and threads — the same config parsing and the same start-up inputs, on
replay's deterministic actor system."""

from __future__ import annotations

from typing import Any

from kactor.broker_process import registration_json, startup_inputs
from kactor.config import build_config
from kactor.trace.inline_system import InlineActorSystem
from sim.runtime import BASE_PORT, HOST, SESSION_TIMEOUT_MS

# The simulated brokers' server.properties beyond broker.id, listeners and log.dirs (Kafka's defaults otherwise):
# a short session timeout keeps a crashed broker's restart near; min.insync.replicas=2 makes acks=all mean two copies;
# __transaction_state and __consumer_offsets (sim/run.py creates them) of one partition each, RF 3, so a seed's
# cluster stays small.
SIM_PROPERTIES = {"zookeeper.connect": "127.0.0.1:2181", "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
                  "kactor.partition.actors": "2", "min.insync.replicas": "2",
                  "transaction.state.log.num.partitions": "1",
                  "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "3",
                  # KIP-890 part 1 on, as the transaction checker's campaigns ran it (off by default in a broker)
                  "transaction.partition.verification.enable": "true"}


class SimBoot:
    """sim.runtime.Boot for kactor's brokers."""

    def __init__(self, overrides: dict[str, str] | None = None) -> None:
        self.overrides = dict(overrides or {})

    def config(self, broker_id: int, log_dir: str) -> Any:
        return build_config({"broker.id": str(broker_id), "listeners": f"PLAINTEXT://{HOST}:{BASE_PORT + broker_id}",
                             "log.dirs": log_dir, **SIM_PROPERTIES, **self.overrides})

    def actor_system(self) -> Any:
        return InlineActorSystem()

    def startup_inputs(self, config: Any, now_ms: int) -> list[tuple[str, Any]]:
        """BrokerProcess.start's inputs, in its order (the registration names the configured port: nothing binds)."""
        return startup_inputs(config, registration_json(config, now_ms))
