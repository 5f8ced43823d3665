"""The flat parameter vector of a network: named arrays laid end to end, in a fixed order."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Layout:
    """``(name, shape)`` of each parameter array, in the order of the flat vector; each array
    is stored row-major (C order), so a slice of the vector reshapes into it without a copy."""

    entries: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def of(cls, entries: Sequence[tuple[str, Sequence[int]]]) -> Layout:
        names = [name for name, _ in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names repeat: {names}")
        return cls(tuple((name, tuple(int(n) for n in shape)) for name, shape in entries))

    @property
    def size(self) -> int:
        """``p``: the length of the flat vector."""
        return sum(math.prod(shape) for _, shape in self.entries)

    def offsets(self) -> dict[str, tuple[int, int]]:
        """Name -> ``(start, stop)`` of its slice of the flat vector."""
        out, start = {}, 0
        for name, shape in self.entries:
            out[name] = (start, start + math.prod(shape))
            start += math.prod(shape)
        return out

    def unflatten(self, flat: Any) -> dict[str, Any]:
        """Name -> array viewed from ``flat`` ``(p,)`` (a NumPy or a JAX array)."""
        offsets = self.offsets()
        return {name: flat[slice(*offsets[name])].reshape(shape) for name, shape in self.entries}

    def flatten(self, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
        """The flat float64 vector ``(p,)`` of ``arrays`` (name -> array of its shape)."""
        parts = []
        for name, shape in self.entries:
            array = np.asarray(arrays[name], dtype=np.float64)
            if array.shape != shape:
                raise ValueError(f"parameter {name}: shape {array.shape}, expected {shape}")
            parts.append(array.ravel())
        return np.concatenate(parts) if parts else np.zeros(0)
