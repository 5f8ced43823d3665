"""Signals for the commands that change the cluster around another command (``cut``,
``rate``): SIGTERM and SIGHUP become an exception, so that the ``finally`` that puts the
links back runs, and the signal can be passed on to the command."""

from __future__ import annotations

import signal
from typing import Any

#: the signals that become ``Stop`` (Ctrl-C is Python's ``KeyboardInterrupt`` already)
STOPPING = (signal.SIGTERM, signal.SIGHUP)


class Stop(Exception):
    """SIGTERM or SIGHUP arrived: put the links back and stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def _raise_stop(signum: int, _frame: Any) -> None:
    raise Stop(signum)


def raise_on_stop() -> dict[int, Any]:
    """From now on SIGTERM and SIGHUP raise ``Stop``; the handlers they had (for
    ``restore``)."""
    return {signum: signal.signal(signum, _raise_stop) for signum in STOPPING}


def restore(previous: dict[int, Any]) -> None:
    """Put back the handlers ``raise_on_stop`` replaced."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def signal_number(error: BaseException) -> int:
    """The signal behind a ``Stop`` or a ``KeyboardInterrupt`` (SIGINT)."""
    return error.signum if isinstance(error, Stop) else signal.SIGINT
