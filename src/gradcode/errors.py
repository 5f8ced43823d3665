"""The errors a user can cause, as one family.

Every error that bad input can provoke (a config key, a run file, a simulation spec, a data
file, a command-line option, a code parameter, an unknown name) is a ``UserError``: the command
line and the MPI entry point print it as one line and exit 2. Anything else is a bug and keeps
its traceback. ``UserError`` is a ``ValueError``, so callers that caught ``ValueError`` before
still catch it.
"""

from __future__ import annotations

from collections.abc import Iterable


class UserError(ValueError):
    """Bad input, reported as one line naming the problem (file, field, constraint)."""


class ParameterError(UserError):
    """A constructor parameter violates a documented constraint (``ye-abbe needs d >= s + m``)."""


class UnknownNameError(UserError):
    """A name that no registry knows: a scheme, timing model, data set, preset, analysis...

    The same type everywhere, with the known names in the message and in ``known``.
    """

    def __init__(self, kind: str, name: object, known: Iterable[str]) -> None:
        self.kind, self.name, self.known = kind, name, tuple(sorted(known))
        super().__init__(f"unknown {kind} {name!r} (available: {', '.join(self.known)})")


class CLIError(UserError):
    """A command-line usage error (an option's value, a missing argument)."""
