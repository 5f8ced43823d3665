"""Models and a small ``recommend`` run shared by the tests (kept small: seconds, not minutes)."""

from __future__ import annotations

import pytest

from gradcode.recommend import recommend
from gradcode.timing import model_from_spec

#: paper 000's Table 3 model (Section 5): strong stragglers and a costly link
TABLE3 = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}
#: few trials: enough to separate the codes these tests compare, fast enough for the suite
FAST = {"trials": 3000, "screen_trials": 400}


def ranking_value(row, rec):
    """What orders ``row`` (``rank`` step 4): its exact expected time, else that of a code with
    the very same Monte Carlo times, else its Monte Carlo mean."""
    if row.exact_time is not None:
        return row.exact_time
    for other in [*rec.ranked, *rec.approximate]:
        same = (other.result.trials, other.result.mean_time, other.result.std_time) == (
            row.result.trials,
            row.result.mean_time,
            row.result.std_time,
        )
        if same and other.exact_time is not None:
            return other.exact_time
    return row.result.mean_time


@pytest.fixture(scope="session")
def table3():
    return model_from_spec("master-worker", TABLE3)


@pytest.fixture(scope="session")
def table3_rec(table3):
    """``recommend`` at n = 8 under Table 3's model (every scheme, no limits)."""
    return recommend(table3, 8, **FAST)
