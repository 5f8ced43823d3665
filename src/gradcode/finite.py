"""What is not finite in a vector, in words: the one spelling of a NaN or infinite message's
reason, which the codes' decoders, the aggregators and the runtime's intake name a liar by."""

from __future__ import annotations

import numpy as np


def nonfinite_reason(vector: np.ndarray) -> str | None:
    """What is not finite in ``vector`` ("NaN", "+inf", "-inf", joined), ``None``: nothing."""
    values = np.asarray(vector, dtype=np.float64)
    if bool(np.isfinite(values).all()):
        return None
    found = [
        word
        for word, present in (
            ("NaN", np.isnan(values).any()),
            ("+inf", np.isposinf(values).any()),
            ("-inf", np.isneginf(values).any()),
        )
        if present
    ]
    return ", ".join(found)
