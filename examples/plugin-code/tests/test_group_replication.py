"""The plug-in through gradcode's conformance kit, as a plug-in author would test a code."""

import pytest

from gradcode.codes import available, build
from gradcode.codes.conformance import assert_conforms
from gradcode.sim.spec import load_spec
from gradcode.timing import timing_models


def test_registered_through_the_entry_points():
    assert "group-replication" in available()
    assert "pareto-master-worker" in timing_models()


@pytest.mark.parametrize("n, s", [(n, s) for n in range(1, 10) for s in range(n)])
def test_conforms_on_every_pattern(n, s):
    assert_conforms(build("group-replication", n=n, s=s), exhaustive=True)


def test_simulates_beside_built_ins():
    spec = load_spec(
        {
            "model": "pareto-master-worker",
            "parameters": {"t1": 1.0, "shape": 2.0},
            "schemes": [
                {"scheme": "group-replication", "params": {"n": 7, "s": 2}},
                {"scheme": "crc", "params": {"n": 7, "s": 2}},
            ],
        },
        origin="test",
    )
    assert len(spec.schemes) == 2
