"""Robust aggregation (``aggregator:``, ``gradcode.aggregators``; codes with
``capabilities.aggregable``) in place of decoding.

The code's per-group values (``aggregation_inputs``: the workers' partial gradients, or a vote
per replica group) go to the aggregator, after any omniscient forgery, and the update is
``total`` times its output: the aggregator estimates the *mean* of the honest values, the
exact path's gradient is their *sum* over all ``total`` groups, and ``Session.step`` divides
that sum by the training rows as it does a decoded one. The aggregation's time is logged as
``aggregate_time`` and included in ``decode_time``; ``aggregate_selected`` (the workers whose
values an aggregator that selects, Krum or Bulyan, kept) and ``aggregate`` (its facts, e.g.
Weiszfeld's ``iterations`` and ``converged``) when it reports them, ``aggregate_refused``
(values it refused as non-finite: the workers behind each and why). Every aggregation checks
the aggregator's tolerance against the values it got (``gradcode.train.tolerance``;
``below_tolerance`` in the record under ``aggregator.below_tolerance: continue``), and an
aggregator run goes on past lost workers with the live workers' values where the code's own
rule would need the lost ones. A refused message's value is kept out, its key answered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.aggregators import Aggregator, AggregatorError
from gradcode.codes import AggregationInputs, NotDecodableError
from gradcode.train.protocol import clock
from gradcode.train.reducers.flat import FlatParts, FlatReducer
from gradcode.train.tolerance import Tolerance
from gradcode.train.transport import Result


class AggregatingReducer(FlatReducer):
    """``aggregator`` reduces the code's values (module docstring); ``tolerance``: its check
    against the values each iteration got; ``votes``: the code's vote names the workers it
    outvoted (``adversaries``)."""

    erasure = "aggregate"

    def __init__(
        self, parts: FlatParts, aggregator: Aggregator, tolerance: Tolerance | None, *, votes: bool
    ) -> None:
        super().__init__(parts)
        self.aggregator, self.tolerance, self.votes = aggregator, tolerance, votes

    def _check_erased(self) -> None:
        return  # the aggregator does without the refused values

    def can_go_on(self, lost: list[int]) -> bool:
        # the aggregator takes what the others send (its tolerance checked then)
        if super().can_go_on(lost):
            return True
        return self.tolerance is not None and len(lost) < self.code.n

    def complete(self, held: dict[Any, Result]) -> bool:
        """Workers are lost and every live worker's messages are in hand."""
        if self.tolerance is None:
            return False
        lost = self.lost()
        return bool(lost) and all(key in held for key in self.live_keys(lost))

    def reduce(self, held: dict[Any, Result]) -> tuple[np.ndarray, dict[str, Any]]:
        extras: dict[str, Any] = {}
        messages = self._messages(held, extras)
        refused = self.refused.workers()
        gradient = self._aggregate(messages, extras)
        if self.votes:
            extras["adversaries"] = sorted(set(extras["adversaries"]) | set(refused))
        return gradient, extras

    def _aggregate(self, messages: dict[Any, np.ndarray], extras: dict[str, Any]) -> np.ndarray:
        """The aggregator's estimate of the honest values' mean, scaled to the gradient sum
        (module docstring); what it reports goes to ``extras``."""
        assert self.tolerance is not None
        code = self.code
        began = clock()
        inputs: AggregationInputs = code.aggregation_inputs(messages, self.features)
        rows = [{int(code.worker_of(k)) for k in keys} for keys in inputs.keys]
        below = self.tolerance.check(self.t, rows)
        if below is not None:  # ``aggregator.below_tolerance: continue``
            extras["below_tolerance"] = below
        try:
            result = self.aggregator.aggregate(inputs.values)
        except AggregatorError as error:  # fewer values than it takes (votes that failed)
            raise NotDecodableError(str(error), needed=None) from None
        gradient = result.value * inputs.total
        extras["aggregate_time"] = clock() - began
        if result.selected is not None:
            keys = [key for index in result.selected for key in inputs.keys[index]]
            extras["aggregate_selected"] = sorted({int(code.worker_of(k)) for k in keys})
        if result.info:
            extras["aggregate"] = result.info
        if result.refused:  # non-finite values, counted against its tolerance
            extras["aggregate_refused"] = [
                {"workers": sorted({int(code.worker_of(k)) for k in inputs.keys[i]}), "why": why}
                for i, why in result.refused.items()
            ]
        if self.votes:
            extras["adversaries"] = sorted({int(code.worker_of(k)) for k in inputs.adversaries})
        return gradient
