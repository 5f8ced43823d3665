"""What the user allows a recommended code to cost or requires it to tolerate.

- ``max_load``: the largest share of the data set one worker processes,
  ``max over messages of code.data_fraction(key)`` (``max_w load(w) / k`` for a gradient code;
  a code of the data, LCC, declares its own share, ``1 / k``);
- ``max_message``: the largest message as a share of the gradient, ``1 / m``;
- ``stragglers``: ``code.s >= stragglers`` (for an approximate code ``s`` is how many workers it
  does not wait for, not how many it tolerates exactly);
- ``schemes``: only these registry names;
- ``exact_only``: no approximate codes (``code.exact is False``);
- ``model_kind``: the model trained (``gradcode.models``: ``logistic``, ``linear``); a code
  that codes the data is exact only for the kinds its ``capabilities.codes_data`` names (LCC:
  linear), so it is excluded for others.

Validated once, in ``Limits.__post_init__`` (``RecommendError`` naming the limit), then
trusted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gradcode.codes import GradientCode, available
from gradcode.errors import UnknownNameError
from gradcode.models import available as available_models
from gradcode.recommend.errors import RecommendError


def fraction(name: str, value: Any) -> float:
    """``value`` as a number in ``(0, 1]``; ``RecommendError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecommendError(f"{name} must be a number in (0, 1] (got {value!r})")
    if not (math.isfinite(value) and 0 < value <= 1):
        raise RecommendError(f"{name} must be a number in (0, 1] (got {value!r})")
    return float(value)


def load_fraction(code: GradientCode) -> float:
    """The largest share of the data set one worker processes (module docstring)."""
    return max(code.data_fraction(key) for key in code.all_message_keys())


def message_fraction(code: GradientCode) -> float:
    """A message's length as a share of the gradient's, ``1 / m``."""
    return 1.0 / code.m


@dataclass(frozen=True)
class Limits:
    """The limits (module docstring); ``None`` / empty / ``False``: no limit."""

    max_load: float | None = None
    max_message: float | None = None
    stragglers: int | None = None
    schemes: tuple[str, ...] | None = None
    exact_only: bool = False
    model_kind: str | None = None

    def __post_init__(self) -> None:
        if self.max_load is not None:
            object.__setattr__(self, "max_load", fraction("max_load", self.max_load))
        if self.max_message is not None:
            object.__setattr__(self, "max_message", fraction("max_message", self.max_message))
        if self.stragglers is not None and (
            isinstance(self.stragglers, bool)
            or not isinstance(self.stragglers, int)
            or self.stragglers < 0
        ):
            raise RecommendError(f"stragglers must be an integer >= 0 (got {self.stragglers!r})")
        if self.schemes is not None:
            names = tuple(self.schemes)
            if not names:
                raise RecommendError("schemes must name at least one scheme")
            known = available()
            for name in names:
                if name not in known:
                    raise UnknownNameError("scheme", name, known)
            object.__setattr__(self, "schemes", tuple(dict.fromkeys(names)))
        if self.model_kind is not None and self.model_kind not in available_models():
            raise UnknownNameError("model", self.model_kind, available_models())

    def describe(self) -> list[str]:
        """The limits in force, as the command line spells them."""
        out = []
        if self.max_load is not None:
            out.append(f"--max-load {self.max_load:g}")
        if self.max_message is not None:
            out.append(f"--max-message {self.max_message:g}")
        if self.stragglers is not None:
            out.append(f"--stragglers {self.stragglers}")
        if self.schemes is not None:
            out.append(f"--schemes {','.join(self.schemes)}")
        if self.exact_only:
            out.append("--exact-only")
        if self.model_kind is not None:
            out.append(f"--model-kind {self.model_kind}")
        return out

    def exclusion(self, code: GradientCode) -> str | None:
        """The first limit ``code`` violates, as the command line spells it (``None``: none).

        ``schemes`` is not checked here: the caller enumerates only those schemes.
        """
        if self.exact_only and not code.exact:
            return "--exact-only"
        if self.max_load is not None and load_fraction(code) > self.max_load + 1e-12:
            return f"--max-load {self.max_load:g}"
        if self.max_message is not None and message_fraction(code) > self.max_message + 1e-12:
            return f"--max-message {self.max_message:g}"
        if self.stragglers is not None and code.s < self.stragglers:
            return f"--stragglers {self.stragglers}"
        kinds = code.capabilities.codes_data
        if self.model_kind is not None and kinds and self.model_kind not in kinds:
            return f"--model-kind {self.model_kind}"
        return None
