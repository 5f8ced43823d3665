"""The two errors a user can cause: bad input files and bad parameters."""

from __future__ import annotations


class DataError(ValueError):
    """An input file is missing, malformed or fails its checksum.

    The message is one line and starts with the file's name, e.g.
    ``train.csv: line 7 has 9 fields, expected 10``.
    """


class OptionError(ValueError):
    """A parameter given to ``prepare`` (or the CLI) is invalid or does not apply."""
