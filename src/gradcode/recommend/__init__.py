"""Which gradient code for this cluster? Candidates ranked by expected time per iteration, and
by expected time to a target training loss.

- ``rank.recommend(model, n, limits=..., trials=..., seed=..., confidence=..., target=...)``:
  the ``Recommendation`` (ranked exact codes, approximate codes apart, skipped schemes with
  reasons, exclusions by the limits, the best and whether it ties the runner-up; with
  ``target``, a ``TargetLoss``, also ``to_target``: the codes ranked by time to that loss);
- ``target``: ``TargetLoss`` (a run file's training problem, the loss, the iterations and
  replicates), ``rank_to_target`` (the section for an existing ``Recommendation``);
- ``recommendation``: what those return (``Recommendation``, ``Row``, ``TargetSection``,
  ``TargetRow``);
- ``exact``: exact expected times per iteration where a closed form holds (master-worker
  model with identical workers, codes that declare a ``completion_rule``), beside the Monte
  Carlo and ordering the ranking;
- ``convergence``: coded gradient descent simulated serially under the timing model
  (``TrainingProblem``, ``exact_iterations``, ``simulate_to_target``);
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

from gradcode.recommend.convergence import TrainingProblem
from gradcode.recommend.errors import RecommendError
from gradcode.recommend.limits import Limits
from gradcode.recommend.rank import recommend
from gradcode.recommend.recommendation import Recommendation, Row, TargetSection
from gradcode.recommend.runfile import run_file_lines
from gradcode.recommend.target import TargetLoss, rank_to_target

__all__ = [
    "Limits",
    "RecommendError",
    "Recommendation",
    "Row",
    "TargetLoss",
    "TargetSection",
    "TrainingProblem",
    "rank_to_target",
    "recommend",
    "run_file_lines",
]
