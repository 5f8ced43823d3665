"""The prepared-data format: ``DIR/data.npz`` plus ``DIR/meta.json``, written and loaded.

``data.npz`` holds, for ``n`` training rows, ``t`` test rows and ``p`` features:

========================  =====================  ==============================================
key                       shape, dtype           meaning
========================  =====================  ==============================================
``X_train_data`` etc.     CSR components         features of the training rows, ``(n, p)``
``X_test_data`` etc.      CSR components         features of the test rows, ``(t, p)``
``X_train``, ``X_test``   ``(n, p)``, float64    instead of the above when ``storage`` is dense
``y_train``, ``y_test``   ``(n,)``, ``(t,)``     labels (+-1, or classes 0..C-1), targets; float64
``train_rows``            ``(n,)``, int64        source row of each training row (see meta)
``test_rows``             ``(t,)``, int64        source row of each test row
``theta_star``            ``(p,)``, float64      true model (synthetic sets only)
``partition_offsets``     ``(k + 1,)``, int64    training rows ``offsets[j]:offsets[j+1]`` form
                                                 partition ``j`` (only with ``partitions``)
========================  =====================  ==============================================

CSR components are ``_data`` (float64), ``_indices`` (int32), ``_indptr`` (int64) and
``_shape`` (int64, 2), with sorted column indices and no duplicates.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from gradcode.data import provenance
from gradcode.data.errors import DataError
from gradcode.data.io import atomic_directory, sha256_file, write_npz, write_text
from gradcode.sparsity import is_sparse

if TYPE_CHECKING:
    from scipy import sparse

# SciPy only where a set is sparse: a rank on dense data never imports it (gradcode.sparsity)
Matrix: TypeAlias = "sparse.csr_array | np.ndarray"


@dataclass
class Built:
    """What a dataset builder returns: the split arrays and how they were made.

    ``X_*`` are ``(rows, p)`` CSR arrays or dense float64 arrays, ``y_*`` float64 ``(rows,)``,
    ``*_rows`` int64 source row numbers (their meaning in ``row_index``). ``recipe`` goes to
    ``meta["recipe"]``; ``extras`` are further arrays for ``data.npz`` (``theta_star``).
    """

    X_train: Matrix
    y_train: np.ndarray
    X_test: Matrix
    y_test: np.ndarray
    train_rows: np.ndarray
    test_rows: np.ndarray
    recipe: dict[str, Any]
    description: str
    row_index: str
    # "classification": labels in {-1, +1}; "multiclass": class indices 0..C-1; "regression"
    task: str = "classification"
    stand_in: bool = False
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    comparison: dict[str, Any] | None = None


@dataclass(frozen=True)
class PreparedData:
    """A prepared data set, as a trainer uses it.

    Attributes:
        X_train: ``(n_train, n_features)`` features, ``scipy.sparse.csr_array`` (or a dense
            float64 array for the Gaussian synthetic sets; ``meta["storage"]`` says which).
        y_train: ``(n_train,)`` float64: labels in {-1, +1} (``multiclass``: class indices
            0..C-1), or targets for regression.
        X_test: ``(n_test, n_features)``, same kind as ``X_train``.
        y_test: ``(n_test,)`` float64.
        train_rows, test_rows: int64 source row of each row (``meta["row_index"]`` says what
            they index), so every row can be traced back to its input file.
        meta: the content of ``meta.json``.
        theta_star: ``(n_features,)`` true model of a synthetic set, else ``None``.
        partition_offsets: ``(k + 1,)`` boundaries of the recorded partition, else ``None``.
    """

    X_train: Matrix
    y_train: np.ndarray
    X_test: Matrix
    y_test: np.ndarray
    train_rows: np.ndarray
    test_rows: np.ndarray
    meta: dict[str, Any]
    theta_star: np.ndarray | None = None
    partition_offsets: np.ndarray | None = None

    @property
    def name(self) -> str:
        """Data set name, e.g. ``amazon`` or ``gisette-standin``."""
        return self.meta["dataset"]

    @property
    def variant(self) -> str:
        return self.meta["variant"]

    @property
    def stand_in(self) -> bool:
        """True for a synthetic stand-in that must never be reported as the real data set."""
        return bool(self.meta["stand_in"])

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.X_test.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])

    def partitions(self) -> list[np.ndarray]:
        """Training-row indices of each recorded partition (``prepare(..., partitions=k)``)."""
        if self.partition_offsets is None:
            raise ValueError(
                f"{self.name}: no partition was recorded; prepare with partitions=k "
                "or use gradcode.data.partition_rows"
            )
        offsets = self.partition_offsets
        return [np.arange(offsets[j], offsets[j + 1]) for j in range(offsets.size - 1)]


def canonical(matrix: Matrix) -> Matrix:
    """C-contiguous float64 for dense arrays; for sparse ones CSR with float64 data, sorted
    indices and no duplicates (stored with int32 indices and int64 indptr)."""
    if not is_sparse(matrix):
        return np.ascontiguousarray(matrix, dtype=np.float64)
    from scipy import sparse

    csr = sparse.csr_array(matrix, dtype=np.float64)
    csr.sum_duplicates()
    csr.sort_indices()
    return csr


def _matrix_arrays(key: str, matrix: Matrix, storage: str) -> dict[str, np.ndarray]:
    if storage == "dense":
        return {key: np.ascontiguousarray(matrix, dtype=np.float64)}
    csr = canonical(matrix)
    return {
        f"{key}_data": csr.data,
        f"{key}_indices": csr.indices.astype(np.int32),
        f"{key}_indptr": csr.indptr.astype(np.int64),
        f"{key}_shape": np.asarray(csr.shape, dtype=np.int64),
    }


def _load_matrix(arrays: Any, key: str, storage: str) -> Matrix:
    if storage == "dense":
        return arrays[key]
    from scipy import sparse

    shape = tuple(int(v) for v in arrays[f"{key}_shape"])
    return sparse.csr_array(
        (arrays[f"{key}_data"], arrays[f"{key}_indices"], arrays[f"{key}_indptr"]), shape=shape
    )


def storage_of(matrix: Matrix) -> str:
    """``"csr"`` for sparse matrices, ``"dense"`` for arrays."""
    return "csr" if is_sparse(matrix) else "dense"


def write_prepared(
    out: str | os.PathLike[str],
    arrays: dict[str, Any],
    meta: dict[str, Any],
    *,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write ``data.npz`` and ``meta.json`` into ``out`` atomically; return the final meta.

    ``arrays`` has ``X_train``, ``X_test`` (matrices) and the 1-d arrays of the table above;
    ``meta`` everything but ``outputs``, which is added here (sha256 and size of data.npz).
    """
    storage = meta["storage"]
    payload: dict[str, np.ndarray] = {}
    for key, value in arrays.items():
        if key in ("X_train", "X_test"):
            payload.update(_matrix_arrays(key, value, storage))
        else:
            payload[key] = np.ascontiguousarray(value)
    with atomic_directory(out, overwrite=overwrite) as scratch:
        data_path = scratch / provenance.DATA_FILE
        write_npz(data_path, payload)
        meta = dict(meta)
        meta["outputs"] = {
            provenance.DATA_FILE: {
                "bytes": data_path.stat().st_size,
                "sha256": sha256_file(data_path),
            }
        }
        write_text(scratch / provenance.META_FILE, provenance.dumps(meta))
    return meta


def verify_prepared(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Check ``data.npz`` against the sha256 and size in ``meta.json``; return the meta.

    Raises ``DataError`` when the file is missing or differs.
    """
    meta = provenance.read_meta(directory)
    expected = meta["outputs"][provenance.DATA_FILE]
    path = Path(directory) / provenance.DATA_FILE
    if not path.is_file():
        raise DataError(f"{provenance.DATA_FILE}: not found in {directory}")
    got = sha256_file(path)
    if got != expected["sha256"]:
        raise DataError(
            f"{provenance.DATA_FILE}: sha256 {got[:16]}... differs from meta.json's "
            f"{expected['sha256'][:16]}... (file changed after it was prepared)"
        )
    return meta


def load_prepared(directory: str | os.PathLike[str], *, verify: bool = True) -> PreparedData:
    """Load a directory written by :func:`gradcode.data.prepare`.

    With ``verify`` (default) ``data.npz`` is first checked against the sha256 recorded in
    ``meta.json``, so a figure can never be made from data that changed after preparation.
    """
    meta = verify_prepared(directory) if verify else provenance.read_meta(directory)
    path = Path(directory) / provenance.DATA_FILE
    storage = meta["storage"]
    try:
        with np.load(path, allow_pickle=False) as arrays:
            data = PreparedData(
                X_train=_load_matrix(arrays, "X_train", storage),
                y_train=arrays["y_train"],
                X_test=_load_matrix(arrays, "X_test", storage),
                y_test=arrays["y_test"],
                train_rows=arrays["train_rows"],
                test_rows=arrays["test_rows"],
                meta=meta,
                theta_star=arrays["theta_star"] if "theta_star" in arrays else None,
                partition_offsets=(
                    arrays["partition_offsets"] if "partition_offsets" in arrays else None
                ),
            )
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        detail = " ".join(str(error).split())
        raise DataError(f"{provenance.DATA_FILE}: cannot read ({detail})") from None
    for key in ("X_train", "X_test"):
        if list(getattr(data, key).shape) != meta["shapes"][key]:
            raise DataError(
                f"{provenance.DATA_FILE}: {key} has shape {getattr(data, key).shape}, "
                f"meta.json says {meta['shapes'][key]}"
            )
    return data
