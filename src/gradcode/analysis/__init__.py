"""Exact and Monte Carlo analyses behind the papers' non-timing figures.

An analysis is a module of this package with a ``compute(trials, seed, progress)`` function
returning an ``Analysis`` (rows plus metadata); ``gradcode analyze NAME --out FILE.csv`` writes
its table and a JSON sidecar. The timing simulations live in ``gradcode.sim``; these are the
other computations the papers plot: load distributions, communication costs, decoding
errors and costs. They depend only on ``gradcode.codes`` and numpy, never on the workflow.
"""

from gradcode.analysis.base import Analysis, Progress
from gradcode.analysis.registry import ANALYSES, available_analyses, run_analysis

__all__ = ["ANALYSES", "Analysis", "Progress", "available_analyses", "run_analysis"]
