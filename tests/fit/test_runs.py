"""From runs' logs to a fitted spec: observations, censoring, overhead, predictions, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from gradcode.cli import main
from gradcode.errors import UserError
from gradcode.fit.observations import ObservationError, pooled, read_run
from gradcode.fit.predict import predict_runs
from gradcode.fit.runs import fit_runs
from gradcode.rate import Rate
from gradcode.sim.spec import load_spec
from tests.fit.fake_runs import write_run, write_tree_run

TRUTH = {"t1": 0.016, "lambda1": 80.0, "t2": 0.06, "lambda2": 10.0}


def test_observations_read_back_what_the_log_says(tmp_path):
    run = write_run(tmp_path / "frc", "frc", {"n": 4, "s": 1}, **TRUTH, iterations=6, seed=1)
    observed = read_run(run, skip=1)
    assert observed.iterations == 5 and observed.workers == 4 and observed.one_clock
    arrays = pooled([observed])
    assert arrays["subsets"].tolist() == [2.0] * 20  # FRC n = 4, s = 1: two partitions each
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()][1:]
    # FRC waits for one worker per group: the others are censored
    assert arrays["observed"].sum() == sum(len(r["messages"]) for r in log) < 20
    first = {m["worker"]: m for m in log[0]["messages"]}
    worker = min(first)
    x1 = (first[worker]["compute"] + first[worker]["injected_compute"]) / 2
    assert observed.per_worker[worker].compute[0] == pytest.approx(x1)
    y = first[worker]["arrival"] - first[worker]["started"]
    assert observed.per_worker[worker].comm[0] == pytest.approx(y - 2 * x1)
    # the overhead is what the iteration took beyond the code's rule on the workers' times:
    # the model's way to them (1 ms) and the master's own work (2 ms)
    assert observed.overhead == pytest.approx((0.003,) * 5)
    waits = np.tile([r["wait_time"] - 0.001 for r in log], 4)  # worker by worker
    assert arrays["threshold"] == pytest.approx(waits)


def test_the_fit_recovers_the_model_through_the_logs_with_censoring(tmp_path):
    runs = [
        write_run(tmp_path / "u", "uncoded", {"n": 8}, **TRUTH, iterations=80, seed=2),
        write_run(
            tmp_path / "y",
            "ye-abbe",
            {"n": 8, "d": 4, "s": 1, "m": 3},
            **TRUTH,
            iterations=80,
            seed=3,
        ),
        write_run(tmp_path / "f", "frc", {"n": 8, "s": 3}, **TRUTH, iterations=80, seed=4),
    ]
    fitted = fit_runs(runs, bootstrap=50)
    assert fitted.pooled.censored > 0
    assert fitted.per_worker is None  # identical workers: pooled
    for component, shift, rate in (
        (fitted.pooled.compute, TRUTH["t1"], TRUTH["lambda1"]),
        (fitted.pooled.comm, TRUTH["t2"], TRUTH["lambda2"]),
    ):
        assert component.shift_interval[0] <= shift <= component.shift_interval[1]
        assert component.rate_interval[0] <= rate <= component.rate_interval[1]
    assert fitted.overhead == pytest.approx(0.003)
    spec = fitted.spec()
    load_spec(spec, origin="fitted")  # a valid simulation spec, its runs' codes as schemes
    assert [s["scheme"] for s in spec["schemes"]] == ["uncoded", "ye-abbe", "frc"]
    assert spec["parameters"]["overhead"] == pytest.approx(0.003)


def test_predictions_of_codes_the_fit_never_saw(tmp_path):
    calibration = write_run(tmp_path / "u", "uncoded", {"n": 8}, **TRUTH, iterations=100, seed=5)
    others = [
        write_run(tmp_path / "f", "frc", {"n": 8, "s": 3}, **TRUTH, iterations=300, seed=6),
        write_run(
            tmp_path / "y",
            "ye-abbe",
            {"n": 8, "d": 4, "s": 1, "m": 3},
            **TRUTH,
            iterations=300,
            seed=7,
        ),
    ]
    spec = fit_runs([calibration], bootstrap=20).spec()
    for prediction in predict_runs(spec, others, trials=20_000):
        assert prediction.ratio == pytest.approx(1.0, abs=0.05)


def test_runs_without_a_shared_clock_use_the_injected_communication(tmp_path):
    run = write_run(
        tmp_path / "u", "uncoded", {"n": 6}, **TRUTH, iterations=60, seed=8, one_clock=False
    )
    fitted = fit_runs([run], bootstrap=20)
    comm = fitted.pooled.comm  # 354 samples: within 15 % (its interval misses in 2 of 20 seeds)
    assert comm.rate == pytest.approx(TRUTH["lambda2"], rel=0.15)
    assert comm.shift == pytest.approx(TRUTH["t2"], abs=0.002)


def test_bad_runs_fail_with_one_line_naming_the_file(tmp_path):
    with pytest.raises(ObservationError, match=r"summary\.json: not found"):
        read_run(tmp_path)
    tree = write_tree_run(tmp_path / "t", CR, **TRUTH, iterations=3, seed=0)
    (tree / "nodes.jsonl").unlink()
    with pytest.raises(ObservationError, match=r"nodes\.jsonl: not found; a tree run's nodes"):
        read_run(tree)
    a = write_run(tmp_path / "a", "uncoded", {"n": 4}, **TRUTH, iterations=3, seed=0)
    b = write_run(tmp_path / "b", "uncoded", {"n": 5}, **TRUTH, iterations=3, seed=0)
    with pytest.raises(ObservationError, match=r"has 5 workers but .* has 4"):
        fit_runs([a, b])
    with pytest.raises(ObservationError, match="no iteration after the first 5"):
        read_run(a, skip=5)
    tree = write_tree_run(tmp_path / "t2", CR, **TRUTH, iterations=3, seed=0)
    flat = write_run(tmp_path / "f", "uncoded", {"n": 12}, **TRUTH, iterations=3, seed=0)
    with pytest.raises(UserError, match="a tree run observes the computation and the link"):
        fit_runs([flat, tree])


CR = {"n": 3, "L": 2, "s": 1}  # CodedReduce: 3 + 9 nodes


def test_tree_runs_are_fitted_from_every_node_cut_short_or_not(tmp_path):
    # slow computations against short links: the next model cuts about a quarter of the nodes
    # short (censored on their computation); their link delays are observed all the same
    truth = {"t1": 0.016, "lambda1": 8.0, "t2": 0.01, "lambda2": 50.0}
    run = write_tree_run(tmp_path / "cr", CR, **truth, iterations=100, seed=3)
    observed = pooled([read_run(run)])["observed"]
    assert observed.size == 12 * 99 and 0.2 < 1 - observed.mean() < 0.35
    fitted = fit_runs([run], bootstrap=0)
    assert fitted.pooled.censored == int((~observed).sum())
    for component, shift, rate in (
        (fitted.pooled.compute, truth["t1"], truth["lambda1"]),
        (fitted.pooled.comm, truth["t2"], truth["lambda2"]),
    ):
        assert component.shift == pytest.approx(shift, abs=0.001)
        assert component.rate_interval[0] <= rate <= component.rate_interval[1]
    assert fitted.overhead == pytest.approx(0.002)
    prediction = predict_runs(fitted.spec(), [run], trials=20_000)[0]
    assert prediction.ratio == pytest.approx(1.0, abs=0.05)


def test_a_tree_runs_goodness_of_fit_replays_when_the_master_decoded(tmp_path):
    # the budgets depend on the nodes tested: the plain conditional test rejected the true
    # model here (p = 0.01); replaying the tree's decision does not, and still rejects a
    # lognormal computation
    truth = {"t1": 0.016, "lambda1": 8.0, "t2": 0.01, "lambda2": 50.0}
    run = write_tree_run(tmp_path / "cr", CR, **truth, iterations=100, seed=1)
    assert fit_runs([run], bootstrap=100).pooled.compute.ks_pvalue > 0.2
    other = write_tree_run(tmp_path / "ln", CR, **truth, iterations=100, seed=1, lognormal=True)
    fitted = fit_runs([other], bootstrap=100)
    assert fitted.pooled.compute.ks_pvalue < 0.01
    assert "compute" in fitted.rejected()


def test_cli_writes_a_spec_simulate_and_recommend_read(tmp_path, capsys):
    run = write_run(tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, iterations=60, seed=9)
    out = tmp_path / "fitted.yaml"
    assert main(["timing", "fit", str(run), "--out", str(out), "--bootstrap", "40"]) == 0
    printed = capsys.readouterr().out
    assert "T1 per subset" in printed and "overhead" in printed
    spec = yaml.safe_load(out.read_text())
    assert spec["model"] == "master-worker" and spec["fit"]["pooled"]["compute"]
    assert main(["codes", "recommend", "--spec", str(out), "--n", "4", "--quiet"]) == 0
    assert "best:" in capsys.readouterr().out


def test_cli_refuses_a_model_that_does_not_fit_and_writes_nothing(tmp_path, capsys):
    run = write_run(tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, iterations=80, seed=10)
    lines = (run / "log.jsonl").read_text().splitlines()
    rng = np.random.default_rng(0)
    bent = []
    for line in lines:  # compute times uniform on [10, 40] ms: no shifted exponential
        record = json.loads(line)
        for message in record["messages"]:
            work = message["compute"] + message["injected_compute"]
            after = message["arrival"] - message["started"] - work
            message["injected_compute"] = float(rng.uniform(0.01, 0.04))
            message["compute"] = 0.0
            message["arrival"] = message["started"] + message["injected_compute"] + after
        record["wait_time"] = max(m["arrival"] for m in record["messages"])
        record["iteration_time"] = record["wait_time"] + 0.002
        bent.append(json.dumps(record))
    (run / "log.jsonl").write_text("\n".join(bent) + "\n")
    out = tmp_path / "fitted.yaml"
    assert main(["timing", "fit", str(run), "--out", str(out), "--bootstrap", "100"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "KS rejects compute" in error and not out.exists()
    args = ["timing", "fit", str(run), "--out", str(out), "--bootstrap", "100"]
    assert main([*args, "--accept-misfit"]) == 0
    assert yaml.safe_load(out.read_text())["fit"]["misfit"] == ["compute"]


def test_runs_over_real_links_fit_a_shared_links_model_with_the_measured_download(tmp_path):
    from tests.fit.fake_runs import BYTES, FEATURES, RATE

    starts = (0.05, 0.1, 0.15, 0.2)
    run = write_run(
        tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, iterations=80, seed=11, links=starts
    )
    # one message size does not identify the latency: no spec, unless given (here: none)
    with pytest.raises(UserError, match="latency is not identifiable from one message size"):
        fit_runs([run], bootstrap=20).spec()
    fitted = fit_runs([run], bootstrap=20, latency=0.0)
    assert fitted.model == "shared-links"
    params = fitted.spec()["parameters"]
    # the rates written with their unit (gradcode.rate), exactly the fitted bytes per second
    rate = Rate.parse(params["rate"], "rate").bytes_per_second
    master_rate = Rate.parse(params["master_rate"], "master_rate").bytes_per_second
    assert rate == fitted.links()["rate"] and master_rate == fitted.links()["master_rate"]
    assert rate == pytest.approx(RATE)  # bytes over the least contended transfer
    # four copies of the model (l + 1 float64s) were through when the last worker had it
    assert master_rate == pytest.approx(4 * 8 * (FEATURES + 1) / 0.2)
    assert params["starts"] == pytest.approx(list(starts))
    assert params["download"] is False and params["data"] == 4
    assert params["a"] == pytest.approx(TRUTH["t1"], abs=0.002)
    assert params["overhead"] == pytest.approx(0.002)  # after the decodable set: the master's
    assert params["latency"] == 0.0 and fitted.report()["link_rates"]["latency"]["given"]
    assert params["header_bytes"] == BYTES - 8 * FEATURES
    links = fitted.report()["link_rates"]
    # every transfer took exactly bytes / RATE here: a rate, but no spread to bound it with
    assert links["workers"][0]["bytes_per_second"] == pytest.approx(RATE)
    assert links["workers"][0]["interval"] is None and "constant" in links["workers"][0]["reason"]
    assert links["master"]["interval"] == pytest.approx([master_rate] * 2)
    load_spec(fitted.spec(), origin="fitted")
    forced = fit_runs([run], bootstrap=20, model="master-worker")
    assert forced.spec()["model"] == "master-worker"
    plain = write_run(tmp_path / "p", "uncoded", {"n": 4}, **TRUTH, iterations=10, seed=12)
    with pytest.raises(UserError, match="not a flat run over real links"):
        fit_runs([plain], model="shared-links")
    summary = json.loads((run / "summary.json").read_text())
    summary["distribution"] = {"way": "scatter"}
    (run / "summary.json").write_text(json.dumps(summary))
    assert fit_runs([run], bootstrap=20).model == "master-worker"  # no link is readable
    with pytest.raises(UserError, match=r"went as copies \(runtime.distribution: isend\)"):
        fit_runs([run], model="shared-links")
    summary["collection"] = {"way": "pull"}
    (run / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(UserError, match=r"were pulled \(runtime.collection: pull\)"):
        fit_runs([run], bootstrap=20)


def test_a_run_file_injects_a_fitted_spec_without_its_overhead(tmp_path):
    from gradcode.runfile.config import ConfigError, parse_config
    from gradcode.runfile.plan import build_plan

    run = write_run(tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, iterations=40, seed=13)
    spec = tmp_path / "fitted.yaml"
    spec.write_text(yaml.safe_dump(fit_runs([run], bootstrap=20).spec()))
    document = {
        "iterations": 3,
        "data": {"dataset": "synthetic-logistic"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "frc", "params": {"n": 4, "s": 1}},
        "optimizer": {"kind": "gd", "step": 1.0},
        "stragglers": {"spec": str(spec)},
    }
    config = parse_config(document)
    assert config.stragglers.model == "master-worker" and config.stragglers.spec == str(spec)
    assert "overhead" not in config.stragglers.params
    assert config.stragglers.params["lambda1"] == pytest.approx(
        yaml.safe_load(spec.read_text())["parameters"]["lambda1"]
    )
    build_plan(config)  # the straggler source accepts it (seconds, time_unit 1)
    both = {**document, "stragglers": {"spec": str(spec), "model": "none"}}
    with pytest.raises(ConfigError, match=r"stragglers\.spec: gives the model"):
        parse_config(both)
    (tmp_path / "other.yaml").write_text("a: 1\n")
    bad = {**document, "stragglers": {"spec": str(tmp_path / "other.yaml")}}
    with pytest.raises(ConfigError, match="is not a simulation spec"):
        parse_config(bad)


def _overhead_line(printed):
    """The printed overhead's value, seconds, and its line."""
    line = next(line for line in printed.splitlines() if line.startswith("overhead"))
    return float(line.split()[1]), line


def test_the_printed_overhead_is_the_written_one(tmp_path, capsys):
    # issue 43: on real links the fit printed the time beyond the workers' own (0.06 s, the
    # model's download in it) and wrote what followed the decodable set (0.0004 s)
    from tests.fit.test_latency import _runs

    runs = _runs(tmp_path, 2e-3, (0.05, 0.1, 0.15, 0.2))
    out = tmp_path / "links.yaml"
    assert main(["timing", "fit", *map(str, runs), "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    shown, line = _overhead_line(printed)
    spec = yaml.safe_load(out.read_text())
    written = spec["parameters"]["overhead"]
    assert shown == pytest.approx(written, rel=1e-3) and written == pytest.approx(0.002)
    assert "after the decodable set (decoding, the update): written" in line
    # the other quantity is printed too, labelled as not written: it holds the download
    (other,) = [row for row in printed.splitlines() if "with the model's download" in row]
    beyond = spec["fit"]["overhead"]
    assert float(other.split()[0]) == pytest.approx(beyond["mean"], rel=1e-3)
    assert beyond["mean"] > 0.1 and "not written" in other
    assert beyond["written"] == written and beyond["written_is"] == "after_decodable"
    assert beyond["after_decodable"]["mean"] == pytest.approx(written)

    plain = write_run(tmp_path / "p", "uncoded", {"n": 4}, **TRUTH, iterations=40, seed=3)
    out = tmp_path / "plain.yaml"
    assert main(["timing", "fit", str(plain), "--out", str(out), "--bootstrap", "20"]) == 0
    shown, line = _overhead_line(capsys.readouterr().out)
    spec = yaml.safe_load(out.read_text())
    assert shown == pytest.approx(spec["parameters"]["overhead"], rel=1e-3)
    assert spec["fit"]["overhead"]["written_is"] == "mean" and "written as" not in line


def test_a_negative_overhead_is_written_as_zero_and_the_output_says_so(tmp_path, capsys):
    run = write_run(
        tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, iterations=40, seed=4, overhead=-0.003
    )
    out = tmp_path / "fitted.yaml"
    assert main(["timing", "fit", str(run), "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    shown, _ = _overhead_line(printed)
    assert shown == pytest.approx(-0.002)  # 1 ms of download less 3 ms
    assert "written as 0 s: a negative mean is no cost" in printed
    assert yaml.safe_load(out.read_text())["parameters"]["overhead"] == 0.0
