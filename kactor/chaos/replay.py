"""The command that replays one seed of `kactor chaos` (its folder kept): what a failing seed's lines and the
transaction checker's table end with."""

from __future__ import annotations


def replay_command(seed: int, steps: int, brokers: int, zk_servers: int) -> str:
    cmd = f"kactor chaos --seeds {seed} --steps {steps} --brokers {brokers}"
    if zk_servers > 1:
        cmd += f" --zookeeper-ensemble {zk_servers}"
    return cmd + " --keep"
