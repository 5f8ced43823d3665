"""The names the split of ``codes/base``, ``codes/coded_reduce`` and ``codes/heterogeneous``
moved still import from where users imported them, as the very same objects."""

from __future__ import annotations

import gradcode.codes
from gradcode.codes import coded_reduce, coded_reduce_theory, heterogeneous, linear, placements
from gradcode.codes.tree import MASTER


def test_linear_code_still_comes_from_the_package():
    assert gradcode.codes.LinearCode is linear.LinearCode


def test_coded_reduce_still_offers_its_theorems_and_the_master():
    for name in ("r_cr", "theorem2_bounds", "tree_size"):
        assert getattr(coded_reduce, name) is getattr(coded_reduce_theory, name)
        assert name in coded_reduce.__all__
    assert coded_reduce.MASTER is MASTER


def test_heterogeneous_still_offers_the_placement_builders():
    for name in ("cyclic_placement", "random_placement", "speed_placement", "validate_placement"):
        assert getattr(heterogeneous, name) is getattr(placements, name)
        assert name in heterogeneous.__all__
