"""Whether a matrix is a SciPy sparse one, without importing SciPy to ask.

SciPy costs a process 0.26 s to import, and an MPI rank on dense data never needs it: twenty
ranks on two cores pay that 2.6 s per run. A sparse matrix can only exist once ``scipy.sparse``
is loaded, so where it is not, the answer is no.
"""

from __future__ import annotations

import sys
from typing import Any


def is_sparse(matrix: Any) -> bool:
    """``scipy.sparse.issparse(matrix)``, importing nothing."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(matrix))
