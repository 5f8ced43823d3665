"""``meta.json``: what was prepared, from which inputs (by sha256), how, and what came out.

The file is canonical JSON (sorted keys, two-space indent, ASCII, LF, final newline) with no
timestamps and no machine paths, so the same inputs and parameters give the same bytes.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.data.errors import DataError
from gradcode.data.io import RawFile

#: value of ``meta["format"]``; bump when the layout of data.npz or meta.json changes
FORMAT = "gradcode-prepared/1"
META_FILE = "meta.json"
DATA_FILE = "data.npz"


@dataclass(frozen=True)
class Published:
    """A published checksum of an input file (of its decompressed content)."""

    sha256: str
    size: int | None = None


def check_input(raw: RawFile, published: Published | None, *, verify: bool) -> dict[str, Any]:
    """Compare ``raw`` with its published checksum and return its ``meta["inputs"]`` entry.

    With ``verify`` a mismatch raises ``DataError``; without it the mismatch is recorded
    (``"verified": false``), never hidden. Files without a published checksum are recorded with
    ``"expected_sha256": null`` and ``"verified": false``.
    """
    if verify and published is not None and raw.sha256 != published.sha256:
        size_note = f"{raw.size:,} bytes"
        if published.size is not None and raw.size != published.size:
            hint = "truncated?" if raw.size < published.size else "modified?"
            size_note += f", the published file has {published.size:,}: {hint}"
        raise DataError(
            f"{raw.file}: sha256 mismatch: got {raw.sha256[:16]}..., expected "
            f"{published.sha256[:16]}... ({size_note}); only if this file is meant to differ, "
            "skip the check (verify_checksums=False, CLI --no-verify-checksums)"
        )
    return {
        "name": raw.name,
        "file": raw.file,
        "bytes": raw.size,
        "sha256": raw.sha256,
        "expected_sha256": None if published is None else published.sha256,
        "verified": bool(verify and published is not None),
    }


def software() -> dict[str, str]:
    """Versions of the libraries whose behaviour the outputs depend on."""
    import numpy
    import scipy
    import sklearn

    import gradcode

    return {
        "gradcode": gradcode.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "scikit-learn": sklearn.__version__,
        "scipy": scipy.__version__,
    }


def dumps(meta: dict[str, Any]) -> str:
    """Canonical JSON text of ``meta``."""
    return json.dumps(meta, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False) + "\n"


def read_meta(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """``meta.json`` of a prepared directory; ``DataError`` if absent, unreadable or foreign."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        raise DataError(f"{META_FILE}: not found in {directory} (not a prepared data directory)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{META_FILE}: not valid JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise DataError(f"{META_FILE}: format is {found!r}, expected {FORMAT!r}")
    return meta
