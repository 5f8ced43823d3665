"""Codes are looked up like attacks, aggregators and models (one ``NamedClasses``), take their
parameters as a mapping or as keywords, and every room checks parameters with
``gradcode.checks``, in one argument order and with the messages users have seen."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode import aggregators, attacks, codes
from gradcode.checks import check_int, check_number
from gradcode.codes import registry
from gradcode.errors import ParameterError
from gradcode.plugins import NamedClasses


def test_codes_are_named_classes_like_the_other_rooms():
    assert isinstance(registry.CLASSES, NamedClasses)
    assert registry.CLASSES.cls("frc") is codes.scheme_class("frc")
    assert registry.source("frc") == "built-in" and "byzshield" in codes.available()


def test_a_mapping_and_keywords_build_the_same_code():
    by_mapping = codes.build("frc", {"n": 6, "s": 1})
    by_keywords = codes.build("frc", n=6, s=1)
    assert type(by_mapping) is type(by_keywords) and by_mapping.params() == by_keywords.params()
    g = np.random.default_rng(0).standard_normal((by_mapping.k, 5))
    messages = {w: by_mapping.encode(w, g[list(by_mapping.partitions(w))]) for w in (0, 2, 4)}
    assert np.allclose(by_mapping.decode(messages, 5), g.sum(axis=0))
    with pytest.raises(TypeError, match="not both"):
        codes.build("frc", {"n": 6}, s=1)
    with pytest.raises(ParameterError, match=r"^frc: .*unexpected keyword argument 't'"):
        codes.build("frc", {"n": 6, "t": 1})


def test_one_checker_keeps_each_rooms_message():
    with pytest.raises(ParameterError, match=r"^frc needs n >= 1 \(got n=0\)$"):
        codes.build("frc", n=0, s=0)
    with pytest.raises(ParameterError, match=r"^frc needs an integer n \(got n=2.5\)$"):
        codes.build("frc", n=2.5, s=0)
    with pytest.raises(ParameterError, match=r"^attack noise needs scale to be a finite number"):
        attacks.build("noise", {"scale": -1.0})
    with pytest.raises(ParameterError, match=r"^aggregator multi-krum needs an integer f \(got"):
        aggregators.build("multi-krum", {"f": True})
    with pytest.raises(ParameterError, match=r"^aggregator trimmed-mean needs beta in \[0, 0.5\)"):
        aggregators.build("trimmed-mean", {"beta": 0.5})
    assert check_int("n", "x", np.int64(3), minimum=1) == 3
    assert check_number("z", "x", 2, within=(0.0, 3.0)) == 2.0
