"""The Snakemake workflow: lint, format, dry run, and config errors at DAG construction."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.smokes import leave_to_the_smokes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _no_slurm_controller(tmp_path_factory):
    """A stand-in ``scontrol`` that fails at once, first on PATH for every test here.

    The SLURM executor plugin asks `scontrol show config` when snakemake starts; on a machine
    with the SLURM client but no running controller that call hangs for ~10 s. These tests talk
    to no cluster, so the stand-in keeps each snakemake call fast.
    """
    shim = tmp_path_factory.mktemp("noslurm")
    (shim / "scontrol").write_text("#!/bin/sh\nexit 1\n")
    (shim / "scontrol").chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
        yield


def _snakemake(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_lint_clean():
    result = _snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


def test_snakefmt_clean():
    snakefmt = shutil.which("snakefmt") or str(Path(sys.executable).parent / "snakefmt")
    result = subprocess.run(
        [snakefmt, "--check", "Snakefile", "workflow"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dry_run_plans_every_stage(tmp_path):
    result = _snakemake(
        "--dry-run",
        "--cores",
        "2",
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--configfile",
        str(ROOT / "config/config.yaml"),
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for rule in (
        "verify_code",
        "code_table",
        "stability",
        "simulate",
        "figure",
        "comparison_table",
        "prepare_data",
        "run_config",
        "train",
    ):
        assert rule in out


def test_the_jobs_cache_their_bytecode_when_the_environment_says_not_to(tmp_path):
    """With ``PYTHONDONTWRITEBYTECODE`` set, every job compiled its imports from source again
    (gradcode.pipeline.bytecode): a real job's interpreter writes gradcode's under
    ``PYTHONPYCACHEPREFIX``."""
    prefix = tmp_path / "pycache"
    target = "results/codes/verify/uncoded-n8.json"
    where = ["--directory", str(tmp_path), "--snakefile", str(ROOT / "Snakefile")]
    config = ["--configfile", str(ROOT / "config/config.yaml")]
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", target, "--cores", "1", *where, *config],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ
        | {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(prefix)}
        | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PYTHONDONTWRITEBYTECODE unset for this workflow's jobs" in result.stderr
    assert json.loads((tmp_path / target).read_text())
    ours = prefix / (ROOT / "src" / "gradcode").relative_to(ROOT.anchor)
    assert list(ours.rglob("*.pyc")), sorted(str(path) for path in prefix.rglob("*.pyc"))[:5]


def _plan(tmp_path, profile: str, config: str):
    """A dry run of ``config`` (an overlay of config/config.yaml) under ``profile``, as from
    the repository's root: the Snakefile reads the base config relative to the working
    directory, so it is linked there."""
    (tmp_path / "config").symlink_to(ROOT / "config")
    return _snakemake(
        "--dry-run",
        "--profile",
        str(ROOT / "workflow/profiles" / profile),
        "--configfile",
        str(ROOT / "config" / config),
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
    )


def test_paper_config_plans(tmp_path):
    result = _plan(tmp_path, "slurm", "paper.yaml")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "amazon-ye-abbe-n10" in out and "train" in out


@pytest.mark.parametrize("config", ["cluster.yaml", "cluster-coded-reduce.yaml"])
def test_the_cluster_configs_plan(tmp_path, config):
    # a study of the base config whose runs an overlay lacks, or an experiment without a
    # notebook, fails the DAG before any node runs
    result = _plan(tmp_path, "slurm-cluster", config)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "train" in out


@pytest.mark.parametrize("profile", ["local", "ci", "slurm"])
def test_profiles_dry_run_the_smoke_config(tmp_path, profile):
    if profile == "slurm":
        leave_to_the_smokes("the workflow smoke runs the smoke config under this profile")
    result = _plan(tmp_path, profile, "smoke.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_figure_records_the_config_files_that_drew_it(tmp_path):
    """Rule figure runs gradcode.pipeline.provenance after its notebook, with the config files
    (relative to the checkout) and --config values as its parameter."""
    result = _snakemake(
        "--dry-run",
        "--printshellcmds",
        "--cores",
        "1",
        "--configfile",
        str(ROOT / "config" / "smoke.yaml"),
        "--directory",
        str(tmp_path),
        "--config",
        'data={"stand_ins": "auto"}',
        "--",
        "results/figures/stability.png",
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert (
        "python -m gradcode.pipeline.provenance results/figures/stability.json --figure stability"
        f" --notebook {ROOT}/workflow/notebooks/stability.py --config config/smoke.yaml"
        """ --overrides '{"data": {"stand_ins": "auto"}}'"""
    ) in out


@pytest.mark.parametrize(
    "config, message",
    [
        ("codes: {verify: [{id: x, scheme: nope, params: {}}]}", "nope"),
        (
            "codes: {verify: [{id: x, scheme: frc, params: {n: 7, s: 2}}]}",
            "codes.verify[0] (id x): frc needs (s + 1) | n (got n=7, s=2)",
        ),
        ("codes: {verify: [{id: x, scheme: uncoded, params: {n: 2}}]}\nextra: 1", "extra"),
        (
            "codes: {verify: [{id: x, scheme: uncoded, params: {n: 2}}]}\n"
            "simulate: {presets: [table-9]}",
            "table-9",
        ),
    ],
)
def test_bad_config_fails_at_dag_construction(tmp_path, config, message):
    result, out = _dry_run(tmp_path, config)
    assert result.returncode != 0
    assert message in out
    assert not (tmp_path / "results").exists()


def _dry_run(tmp_path, config, env=None):
    bad = tmp_path / "config.yaml"
    bad.write_text(config + "\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--dry-run",
            "--cores",
            "1",
            "--configfile",
            str(bad),
            "--directory",
            str(tmp_path),
            "--snakefile",
            str(ROOT / "Snakefile"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    return result, result.stdout + result.stderr


CODES = "codes: {verify: [{id: x, scheme: uncoded, params: {n: 2}}]}"

#: the config schema's one definition of a rate
RATE_REF = "#/$defs/rate"


def _rate_fields(node, path=()):
    """Every place of the config schema that holds a rate, by its path (``[]``: an array's
    items), and every property named like one (``rate``, ``*_rate``, ``rates``)."""
    for key, value in node.get("properties", {}).items():
        if key == "rate" or key.endswith(("_rate", "rates")):
            yield (*path, key), value
        yield from _rate_fields(value, (*path, key))
    if isinstance(node.get("items"), dict):
        yield from _rate_fields(node["items"], (*path, "[]"))


def _config_with(path, value):
    """A config holding ``value`` at the schema path ``path`` (the cluster's links need nodes)."""
    config = {"codes": {"verify": [{"id": "x", "scheme": "uncoded", "params": {"n": 2}}]}}
    node = config
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if path[-2:-1] == ("links",):
        node.update({"nodes": 3, "rate": "100mbit"})
    node[path[-1]] = [value] if path[-1] == "rates" else value
    return config


def test_every_rate_field_of_the_config_schema_takes_the_one_grammar():
    import jsonschema
    import yaml

    from gradcode.rate import PATTERN, Rate

    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    assert schema["$defs"]["rate"]["pattern"] == PATTERN  # the grammar, not a copy of it
    fields = dict(_rate_fields(schema))
    assert set(fields) == {
        ("cluster", "links", "rate"),
        ("cluster", "links", "master_rate"),
        ("cluster", "links", "rates"),
    }
    for path, field in fields.items():
        reference = field["items"] if field.get("type") == "array" else field
        assert reference["$ref"] == RATE_REF, path
    validator = jsonschema.Draft202012Validator(schema)
    for path in fields:
        for good in ("100mbit", "2.5Gbit", "12.5MB/s", "1kB/s"):
            Rate.parse(good, "rate")
            assert validator.is_valid(_config_with(path, good)), (path, good)
        for bad in ("100mbps", "100Mbps", "100MBps", "1Mb/s", "100", "100KiB/s", "fast", 100):
            assert not validator.is_valid(_config_with(path, bad)), (path, bad)


def test_a_sweep_of_one_rate_spelt_twice_fails_at_dag_construction(tmp_path):
    links = "cluster: {links: {nodes: 3, rate: 100mbit, rates: [100mbit, 12.5MB/s]}}"
    result, out = _dry_run(tmp_path, f"{CODES}\n{links}")
    assert result.returncode != 0
    assert "config cluster.links.rates[1]: '12.5MB/s' is 100mbit, which the list already" in out
    result, out = _dry_run(tmp_path, f"{CODES}\ncluster: {{links: {{nodes: 3, rate: 100mbps}}}}")
    assert result.returncode != 0 and "100mbps" in out


def test_bad_experiment_fails_naming_file_run_and_key(tmp_path):
    experiment = tmp_path / "broken.yaml"
    experiment.write_text(
        "base: {iterations: 2, data: {dataset: synthetic-logistic, variant: small},\n"
        "       model: {kind: logistic}, optimizer: {kind: gd, step: 1}}\n"
        "runs:\n  ok: {scheme: {name: uncoded, params: {n: 3}}}\n"
        "  bad: {scheme: {name: frc, params: {n: 5, s: 1}}}\n"
    )
    result, out = _dry_run(tmp_path, f"{CODES}\ntrain: {{experiments: [{experiment}]}}")
    assert result.returncode != 0
    assert "config train.experiments[0]" in out and "broken.yaml: runs.bad" in out
    assert "frc needs (s + 1) | n" in out
    assert not (tmp_path / "results").exists()


def test_experiment_runs_and_figures_are_planned(tmp_path):
    result, out = _dry_run(
        tmp_path,
        f"{CODES}\ntrain: {{experiments: [config/experiments/ye-abbe-amazon.yaml]}}\n"
        "simulate: {presets: [ye-abbe-fig3]}",
    )
    assert result.returncode == 0, out
    assert "results/train/ye-abbe-amazon/n20-d3-s0-m3/summary.json" in out
    assert "results/figures/ye_abbe_fig3.png" in out and "results/figures/ye_abbe_fig4.png" in out


def test_missing_real_data_uses_the_labelled_stand_in_or_fails_when_told(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "GRADCODE_DATA_DIR"}
    config = f"{CODES}\ntrain: {{runs: [config/runs/amazon-tandon-uncoded.yaml]}}"
    result, out = _dry_run(tmp_path, config, env)
    assert result.returncode == 0, out
    assert "results/data/amazon-standin/tandon" in out
    assert "training on the labelled stand-in amazon-standin" in out
    result, out = _dry_run(tmp_path, config + "\ndata: {stand_ins: never}", env)
    assert result.returncode != 0
    assert "config data.stand_ins=never: the raw files of amazon (tandon) are not in" in out
    assert not (tmp_path / "results").exists()


def test_a_plugin_code_passes_the_config_schema_and_an_unknown_name_lists_it(tmp_path):
    from tests.helpers.plugins import make_distribution

    site = make_distribution(tmp_path / "site")
    spec = tmp_path / "mine.yaml"
    spec.write_text(
        "model: master-worker\nparameters: {lambda1: 0.8, t1: 1.6}\n"
        "schemes: [{scheme: toy-replica, params: {n: 4}}, {scheme: frc, params: {n: 4, s: 1}}]\n"
    )
    # the plug-in's site before whatever PYTHONPATH already holds (a checkout's src/)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    config = (
        "codes: {verify: [{id: toy, scheme: toy-replica, params: {n: 4}, exhaustive: true}]}\n"
        f"simulate: {{specs: [{spec}]}}"
    )
    result, out = _dry_run(tmp_path, config, env)
    assert result.returncode == 0, out
    for planned in ("verify_code", "simulate_spec", "results/sim/spec/mine.csv", "simulations"):
        assert planned in out
    result, out = _dry_run(tmp_path, "codes: {verify: [{id: x, scheme: nope, params: {}}]}", env)
    assert result.returncode != 0
    assert "codes.verify[0] (id x): unknown scheme 'nope'" in out and "toy-replica" in out


def _shell_commands(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Shell command:")]


@pytest.mark.parametrize("profile", [None, "slurm"])
def test_tolerant_runs_start_on_ulfm_inside_inject_locally_and_under_slurm(tmp_path, profile):
    """Runs with faults.tolerate take rule train_faults: Open MPI's ULFM launcher (not hydra,
    not srun: inside the SLURM allocation too), wrapped in gradcode train inject, judged by
    gradcode.pipeline.faults; the other runs keep their launcher."""
    config = tmp_path / "config.yaml"
    config.write_text(
        f"{CODES}\ntrain: {{runs: [config/runs/smoke-frc.yaml],"
        " experiments: [config/experiments/failed-workers.yaml]}\n"
    )
    where = ["--profile", str(ROOT / "workflow/profiles" / profile)] if profile else ["-c1"]
    result = _snakemake(
        "--dry-run", "--printshellcmds", *where,
        "--configfile", str(config), "--directory", str(tmp_path),
        "--snakefile", str(ROOT / "Snakefile"),
        "results/train/failed-workers/coded-reduce/summary.json",
        "results/train/smoke-frc/summary.json",
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    commands = _shell_commands(out)
    tolerant = next(line for line in commands if "failed-workers/coded-reduce" in line)
    run = "results/train/failed-workers/coded-reduce"
    assert (
        f"gradcode train inject {run}/run.yaml --out {run} --record {run}/kills.json --"
        f" python -m gradcode.launch.ulfm -n 7 python -m gradcode.train {run}/run.yaml" in tolerant
    )
    assert f"python -m gradcode.pipeline.faults {run}/run.yaml {run}/summary.json $status" in (
        tolerant
    )
    assert "srun" not in tolerant and "mpiexec" not in tolerant
    plain = next(line for line in commands if "smoke-frc/run.yaml" in line)
    assert ("srun --mpi=pmi2 -n 5" if profile else "mpiexec.hydra -n 5") in plain


@pytest.mark.mpi
def test_an_expected_stop_passes_the_workflow_and_any_other_failure_fails_it(tmp_path):
    """A run whose kill leaves its code unable to decode exits 3 with its checkpoint: the
    workflow takes that as its result; the same rule fails on any other exit status."""
    experiment = tmp_path / "stop.yaml"
    experiment.write_text(
        "base: {iterations: 12, data: {dataset: synthetic-logistic, variant: small},\n"
        "       model: {kind: logistic}, optimizer: {kind: gd, step: 1},\n"
        "       stragglers: {model: fixed, params: {compute: 0.02}}}\n"
        "runs:\n  uncoded:\n    scheme: {name: uncoded, params: {n: 2}}\n"
        "    faults: {kill: [{worker: 1, iteration: 2}]}\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(f"{CODES}\ntrain: {{experiments: [{experiment}]}}\n")
    target = "results/train/stop/uncoded/summary.json"
    common = ["--cores", "2", "--configfile", str(config), "--directory", str(tmp_path)]
    common += ["--snakefile", str(ROOT / "Snakefile"), target]
    result = _snakemake(*common)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    summary = json.loads((tmp_path / target).read_text())
    assert summary["stopped"]["failed_workers"] == [1] and summary["completed"] < 12
    log = (tmp_path / "results/logs/train/stop/uncoded.log").read_text()
    assert "gradcode.train: stopped: worker 1 (rank 2" in log
    assert "stopped as its faults say" in log and "world_size 3 as requested" in log
    # the same job, its launcher replaced by one that fails: the workflow fails
    result = _snakemake(*common, "--forcerun", "train_faults", "--set-resources",
                        "train_faults:mpi=false")  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode != 0
    log = (tmp_path / "results/logs/train/stop/uncoded.log").read_text()
    assert "the job failed with exit status 1" in log, log
