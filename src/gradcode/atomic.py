"""The one atomic writer: a file appears whole or not at all.

Everything the project writes for others to read (tables, sidecars, logs, checkpoints, run
summaries, comparison rows, downloaded files) is written to a temporary file beside its target
and renamed over it, so a crash or a kill never leaves a partial file under the real name.
``durable`` also flushes the data and the folder entry to disk (checkpoints, which a resumed
job must be able to trust after a node failure).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_file(
    path: str | os.PathLike[str], mode: str = "w", *, durable: bool = False, **options: Any
) -> Iterator[IO[Any]]:
    """An open temporary file that replaces ``path`` when the ``with`` block succeeds.

    ``mode`` is ``"w"`` (text: UTF-8 and LF unless ``options`` say otherwise) or ``"wb"``;
    ``options`` go to ``open``. On an exception the temporary is removed and ``path`` is left
    as it was.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file writes with mode 'w' or 'wb' (got {mode!r})")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == "w":
        options = {"encoding": "utf-8", "newline": "\n", **options}
    # here, not at the top: tempfile (and the random module it pulls) costs every MPI rank's
    # start-up, and only the ranks that write files need it
    import tempfile

    handle, scratch = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".partial", dir=target.parent
    )
    os.chmod(scratch, 0o666 & ~_umask())  # what open() would have given the file
    try:
        with os.fdopen(handle, mode, **options) as stream:
            yield stream
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(scratch, target)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    if durable:
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, durable: bool = False) -> Path:
    """Write ``data`` (text as UTF-8 with LF, or bytes) to ``path`` atomically."""
    with atomic_file(path, "wb" if isinstance(data, bytes) else "w", durable=durable) as stream:
        stream.write(data)
    return Path(path)


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    """``data`` as indented JSON with a final newline at ``path``, atomically (records that
    people and tests read: a cut's, a rate change's)."""
    with atomic_file(path) as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")
