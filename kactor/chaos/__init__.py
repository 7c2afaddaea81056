"""`kactor chaos`: seeded runs of operations and faults against a real cluster, checked against invariants.

schedule (a seed's steps, pure) → runner (a real cluster, producers, the steps, healing) → history (what was seen)
→ checks (safety, data, liveness; pure) → report (a line per seed, the summary, the replay command).
"""
