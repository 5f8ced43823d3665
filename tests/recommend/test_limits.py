"""Limits filter what they say, count what they exclude, and refuse bad values in one line."""

from __future__ import annotations

import pytest

from gradcode.errors import UnknownNameError
from gradcode.recommend import Limits, RecommendError, recommend
from gradcode.recommend.limits import load_fraction
from gradcode.timing import model_from_spec

SMALL = {"trials": 400, "screen_trials": 200}


@pytest.fixture(scope="module")
def model():
    return model_from_spec("master-worker", {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6})


@pytest.fixture(scope="module")
def unlimited(model):
    return recommend(model, 6, **SMALL)


def _rows(rec):
    return [*rec.ranked, *rec.approximate]


def _total(rec):
    return len(_rows(rec)) + sum(exclusion.total for exclusion in rec.excluded)


@pytest.mark.parametrize(
    "limits, holds",
    [
        (Limits(max_load=1 / 3), lambda row: load_fraction(row.code) <= 1 / 3 + 1e-12),
        (Limits(max_message=0.5), lambda row: row.code.m >= 2),
        (Limits(stragglers=2), lambda row: row.code.s >= 2),
        (Limits(exact_only=True), lambda row: row.code.exact),
        (
            Limits(model_kind="logistic"),
            lambda row: not row.code.capabilities.codes_data,
        ),
    ],
)
def test_every_row_meets_the_limit_and_the_rest_is_counted(model, unlimited, limits, holds):
    rec = recommend(model, 6, limits=limits, **SMALL)
    assert _rows(rec) and all(holds(row) for row in _rows(rec))
    violating = [row for row in _rows(unlimited) if not holds(row)]
    assert violating and sum(e.total for e in rec.excluded) == len(violating)
    assert _total(rec) == _total(unlimited)  # nothing silently dropped
    assert [e.limit for e in rec.excluded] == limits.describe()


def test_schemes_restrict_and_the_reference_stays_marked_outside(model):
    rec = recommend(model, 6, limits=Limits(schemes=("ye-abbe", "frc")), **SMALL)
    assert {row.scheme for row in rec.ranked} == {"ye-abbe", "frc"}
    assert rec.reference.scheme == "uncoded" and not rec.reference.within_limits
    assert "outside the limits" in rec.reference.notes() and rec.reference not in rec.ranked
    assert rec.approximate == []


def test_the_reference_outside_a_limit_is_still_simulated(model):
    rec = recommend(model, 6, limits=Limits(stragglers=1), **SMALL)
    assert rec.reference is not None and rec.reference.ratio == 1.0
    assert all(row.ratio < 1 for row in rec.ranked[:3])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_load": 0}, RecommendError, "max_load must be a number in (0, 1]"),
        ({"max_message": 1.5}, RecommendError, "max_message must be a number in (0, 1]"),
        ({"stragglers": -1}, RecommendError, "stragglers must be an integer >= 0"),
        ({"schemes": ("nope",)}, UnknownNameError, "unknown scheme 'nope'"),
        ({"schemes": ()}, RecommendError, "schemes must name at least one scheme"),
        ({"model_kind": "svm"}, UnknownNameError, "unknown model 'svm'"),
    ],
)
def test_bad_limits_are_one_line_errors(kwargs, error, message):
    with pytest.raises(error) as raised:
        Limits(**kwargs)
    assert message in str(raised.value) and "\n" not in str(raised.value)
