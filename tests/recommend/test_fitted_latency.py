"""``recommend`` ranks with the latency ``gradcode timing fit`` estimated: through the spec's
``shared-links`` model, a flat code pays one latency a message each way, a ring ``2 (N - 1)``
(``gradcode.timing.links``), so a latency of a few milliseconds turns a ring's lead over a flat
code into a loss."""

from __future__ import annotations

import pytest

from gradcode.fit.runs import fit_runs
from gradcode.recommend import Limits, recommend
from gradcode.sim.spec import load_spec
from gradcode.timing import model_from_spec
from tests.fit.fake_runs import FEATURES, RATE, write_run
from tests.fit.test_latency import TRUTH, _runs

LATENCY = 5e-3  # one way: 2.5 times a full result's 2 ms over the fitted rate
FLAT, RING = "uncoded", "ring-allreduce"


def _times(model, schemes):
    ranked = recommend(
        model, 4, limits=Limits(schemes=schemes), trials=2000, screen_trials=500, seed=3
    ).ranked
    return [row.scheme for row in ranked], {row.scheme: row.result.mean_time for row in ranked}


def test_the_fitted_latency_turns_a_rings_lead_over_a_flat_code(tmp_path):
    # the model's copies one after the other through the master's port, the last a latency
    # plus four copies' bytes over the rate after the iteration began
    copy = 8 * (FEATURES + 1) / RATE
    starts = tuple(LATENCY + (j + 1) * copy for j in range(4))
    spec = fit_runs(_runs(tmp_path, LATENCY, starts), bootstrap=20).spec()
    params = spec["parameters"]
    latency = params["latency"]
    assert latency == pytest.approx(LATENCY, abs=0.2e-3)

    # the spec as fitted (flat codes: their measured download): every result a latency later
    fitted = load_spec(spec, origin="fitted").model
    without = model_from_spec("shared-links", params | {"latency": 0.0})
    _, at = _times(fitted, (FLAT, RING))
    _, zero = _times(without, (FLAT, RING))
    assert at[FLAT] - zero[FLAT] == pytest.approx(latency)
    # a ring downloads nothing: the spec's measured starts leave it alone, its steps pay
    assert at[RING] - zero[RING] == pytest.approx(6 * latency)

    # the same fitted computation and links with the model's own download, which rings and
    # trees have too: a flat code pays 2 latencies (the model down, its result up), a ring
    # 2 (N - 1) = 6 (its steps), on the very same draws
    modelled = {k: v for k, v in params.items() if k not in ("starts", "download")}
    order, at = _times(model_from_spec("shared-links", modelled), (FLAT, RING))
    order_zero, zero = _times(
        model_from_spec("shared-links", modelled | {"latency": 0.0}), (FLAT, RING)
    )
    assert order_zero == [RING, FLAT] and order == [FLAT, RING]
    assert at[RING] - zero[RING] == pytest.approx(6 * latency)
    assert at[FLAT] - zero[FLAT] == pytest.approx(2 * latency)


def test_a_fitted_spec_ranks_rings_without_a_download_and_skips_trees(tmp_path):
    # issue 43: the guide said rings need the model's own download, recommend ranked them
    # from the measured starts. A ring run downloads nothing (every worker holds the model,
    # gradcode.train.ring), so the starts, a flat run's download, do not concern it: ranked,
    # the same as with download: true; a tree downloads down the tree: skipped, named
    options = {"iterations": 40, "links": tuple(0.01 * (j + 1) for j in range(6)), "queueing": 5e-4}
    runs = [
        write_run(tmp_path / "u", "uncoded", {"n": 6}, **TRUTH, seed=7, latency=LATENCY, **options),
        write_run(
            tmp_path / "y",
            "ye-abbe",
            {"n": 6, "d": 3, "s": 1, "m": 2},
            **TRUTH,
            seed=8,
            latency=LATENCY,
            **options,
        ),
    ]
    params = fit_runs(runs, bootstrap=20).spec()["parameters"]
    limits = Limits(schemes=(FLAT, RING, "coded-reduce"))

    def ranked(model):
        rec = recommend(model, 6, limits=limits, trials=500, screen_trials=200, seed=3)
        return {row.scheme: row.result.mean_time for row in rec.ranked}, rec.skipped

    fitted, skipped = ranked(model_from_spec("shared-links", params))
    assert set(fitted) == {FLAT, RING}
    (tree,) = skipped
    assert tree.scheme == "coded-reduce" and tree.reason.startswith("parameters.starts:")
    downloaded = {k: v for k, v in params.items() if k != "starts"} | {"download": True}
    modelled, none_skipped = ranked(model_from_spec("shared-links", downloaded))
    assert modelled[RING] == fitted[RING] and modelled[FLAT] != fitted[FLAT]
    assert "coded-reduce" in modelled and not none_skipped
