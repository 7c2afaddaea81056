"""`kactor sim`'s logging: the console shows none of the brokers' records (not even CRITICAL: a broker halting on its
failed log dirs, a fault the seed injected, printed a line every few seeds among the progress bar), yet an actor's
logged exception (ERROR) still reaches the handlers sim/run.py's ActorErrors adds (the root logger at CRITICAL
dropped it before 2026-11-27: the "an actor raised" invariant never fired in a campaign)."""

from __future__ import annotations

import subprocess
import sys

SNIPPET = """
import logging
from kactor.cli.cmd_sim import configure_logging

configure_logging({verbose})
seen = []

class Catch(logging.Handler):
    def emit(self, record):
        seen.append((record.levelname, record.exc_info is not None))

logging.getLogger().addHandler(Catch(logging.ERROR))
log = logging.getLogger("kactor.controller")
log.warning("a warning")
try:
    raise RuntimeError("boom")
except RuntimeError:
    log.exception("Error processing event BrokerChange()")
log.critical("a critical line")
print(seen)
"""


def _run(verbose: bool) -> tuple[str, str]:
    p = subprocess.run([sys.executable, "-c", SNIPPET.format(verbose=verbose)], capture_output=True, text=True,
                       timeout=60, check=True)
    return p.stdout.strip(), p.stderr


def test_an_actor_s_exception_reaches_the_run_s_handlers_while_the_console_shows_nothing() -> None:
    out, err = _run(False)
    assert out == "[('ERROR', True), ('CRITICAL', False)]"
    assert err == ""


def test_verbose_shows_warnings_and_errors_too() -> None:
    out, err = _run(True)
    assert out == "[('ERROR', True), ('CRITICAL', False)]"
    assert "WARNING kactor.controller: a warning" in err and "RuntimeError: boom" in err
    assert "CRITICAL kactor.controller: a critical line" in err
