"""Which gradient code for this cluster? Candidates ranked by expected time per iteration.

- ``rank.recommend(model, n, limits=..., trials=..., seed=..., confidence=...)``: the
  ``Recommendation`` (ranked exact codes, approximate codes apart, skipped schemes with
  reasons, exclusions by the limits, the best and whether it ties the runner-up);
- ``candidates``: every registered scheme's configurations for ``n`` workers (grids, and
  allocations for workers of unequal speed), what is skipped and why;
- ``speeds``: the workers' relative times per data subset, measured through the model;
- ``workers``: per-worker parameters of a model (how many workers, which are alike);
- ``limits``: ``Limits`` (load, message size, stragglers, schemes, exact only);
- ``simulation``: codes through ``gradcode.sim.montecarlo.simulate``;
- ``runfile``: the ``scheme:`` lines of a run file; ``report``: text, CSV and JSON;
- ``cli``: ``gradcode codes recommend``.
"""

from __future__ import annotations

from gradcode.recommend.errors import RecommendError
from gradcode.recommend.limits import Limits
from gradcode.recommend.rank import Recommendation, Row, recommend
from gradcode.recommend.runfile import run_file_lines

__all__ = ["Limits", "RecommendError", "Recommendation", "Row", "recommend", "run_file_lines"]
