"""A flat code's own decoder (``decode_result``): the exact reduction.

A code that corrects adversaries (``a > 0``; the plan says whether its master names liars,
``gradcode.runfile.plan.names_liars``) has the workers it caught logged (``adversaries``) and
checked against ``a`` and the emulation's knowledge (``gradcode.train.faults.caught``); a
refused message is then a zero message it corrects (``gradcode.train.refusals``). One that
estimates its error has the estimate logged (``error_estimate``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.reducers.flat import FlatParts, FlatReducer
from gradcode.train.transport import Result


class DecodingReducer(FlatReducer):
    """The code decodes (module docstring); ``names``: it names the liars it corrects."""

    def __init__(self, parts: FlatParts, *, names: bool) -> None:
        super().__init__(parts)
        self.names = names
        self.erasure = "correct" if names else None

    def _check_erased(self) -> None:
        if self.erasure is None:
            super()._check_erased()
            return
        named = self.refused.workers()
        if len(named) > self.code.a:
            raise DecodingFailed(
                self.t,
                f"workers {named} sent messages refused ({self.refused.reason()}), more "
                f"liars than the code corrects (a = {self.code.a})",
            )

    def reduce(self, held: dict[Any, Result]) -> tuple[np.ndarray, dict[str, Any]]:
        extras: dict[str, Any] = {}
        messages = self._messages(held, extras)
        refused = self.refused.workers()
        if self.erasure == "correct":
            messages |= self.refused.placeholders(self.width)
        result = self.code.decode_result(messages, self.features)
        if self.names:
            named = sorted({int(self.code.worker_of(k)) for k in result.adversaries})
            extras["adversaries"] = sorted(set(named) | set(refused))
            caught = self.roster.caught
            if caught is not None:  # past the code's bound: no step along this result
                # a refused sender is proven a liar by its message: only the decoder's
                # guesses are checked against the emulation's knowledge, all against ``a``
                caught.check(self.t, [w for w in named if w not in refused])
                caught.check(self.t, extras["adversaries"], proven=True)
        if self.code.capabilities.estimates_error:
            extras["error_estimate"] = result.error_estimate
        return result.gradient, extras
