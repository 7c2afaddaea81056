"""Where a test run's time went, by module: setup, call and teardown of every test summed per file, from the
JUnit XML pytest wrote (``--junitxml``), the longest first. `scripts/test` prints it after each run, so that what
makes the suite long shows in every run's output (CI's included) and not only its 30 slowest tests.

    python scripts/test_times.py RUN.xml [TOP]
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def module_times(path: str) -> tuple[list[tuple[str, float, int]], float]:
    """(module file, seconds, tests) per module, the longest first, and the run's summed seconds. A test's time in
    the XML is its setup, call and teardown: a module-scoped fixture counts in the module's first test."""
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").split("[", 1)[0]
        # classname is the dotted module, then the class if any: tests.cluster.test_x(.TestY)
        parts = module.split(".")
        while parts and not parts[-1].startswith("test"):
            parts.pop()
        name = "/".join(p for p in parts if p) + ".py" if parts else module
        totals[name] += float(case.get("time", 0.0))
        counts[name] += 1
    rows = sorted(((m, t, counts[m]) for m, t in totals.items()), key=lambda r: -r[1])
    return rows, sum(totals.values())


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        rows, total = module_times(argv[0])
    except (OSError, ET.ParseError) as e:
        print(f"test_times: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 1
    top = int(argv[1]) if len(argv) > 1 else 25
    print(f"time by module, summed over the workers: {total:.0f} s in {sum(r[2] for r in rows)} tests; "
          f"the {min(top, len(rows))} longest:")
    for module, seconds, n in rows[:top]:
        print(f"{seconds:8.1f} s {seconds / total:6.1%} {n:5d}  {module}" if total else f"{module}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
