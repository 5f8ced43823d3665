"""The two errors a user can cause with data: bad input files and bad parameters (both
``gradcode.errors.UserError``)."""

from __future__ import annotations

from gradcode.errors import UserError


class DataError(UserError):
    """An input file is missing, malformed or fails its checksum.

    The message is one line and starts with the file's name, e.g.
    ``train.csv: line 7 has 9 fields, expected 10``.
    """


class OptionError(UserError):
    """A parameter given to ``prepare`` (or the CLI) is invalid or does not apply."""
