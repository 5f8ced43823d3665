# Config validation and helpers shared by the rule files.
import shlex
from pathlib import Path

import yaml
from snakemake.utils import validate

from gradcode.codes import build
from gradcode.train.config import ConfigError, load_config
from gradcode.train.plan import build_plan

validate(config, schema="../schemas/config.schema.yaml")

CODES = {entry["id"]: entry for entry in config["codes"]["verify"]}


def _check_code_parameters():
    """Impossible code parameters fail here, at DAG construction, naming the config key."""
    for index, entry in enumerate(config["codes"]["verify"]):
        try:
            build(entry["scheme"], **entry["params"])
        except ValueError as error:
            raise ValueError(
                f"config codes.verify[{index}] (id {entry['id']}): {error}"
            ) from None
    if len(CODES) != len(config["codes"]["verify"]):
        raise ValueError("config codes.verify: ids must be unique")


_check_code_parameters()


def verify_args(code_id):
    entry = CODES[code_id]
    words = [entry["scheme"]]
    for key, value in entry["params"].items():
        words += [f"--{key}", str(value).replace("'", "")]
    if entry.get("exhaustive"):
        words.append("--exhaustive")
    return shlex.join(words)


def _repo_path(path):
    """Config paths are relative to the repository, wherever the workflow runs."""
    return str(Path(workflow.basedir, path))


TRAIN_RUNS = {Path(path).stem: _repo_path(path) for path in config["train"]["runs"]}
_RANKS = {}


def _check_training_runs():
    """Run files are validated at DAG construction; the workflow prepares their data itself."""
    if len(TRAIN_RUNS) != len(config["train"]["runs"]):
        raise ValueError("config train.runs: run file names (stems) must be unique")
    for index, path in enumerate(config["train"]["runs"]):
        try:
            _RANKS[Path(path).stem] = build_plan(
                load_config(_repo_path(path))
            ).world_size
        except ConfigError as error:
            raise ValueError(f"config train.runs[{index}] ({path}): {error}") from None
        data = yaml.safe_load(Path(_repo_path(path)).read_text())["data"]
        extra = sorted(set(data) - {"dataset", "variant", "trim", "partition_seed"})
        if "dataset" not in data or extra:
            raise ValueError(
                f"config train.runs[{index}] ({path}): data must name dataset and variant "
                f"only (prepared by the workflow); got {sorted(data)}"
            )


_check_training_runs()


def run_data(run):
    """(dataset, variant) of training run ``run``."""
    from gradcode.data import DATASETS

    data = yaml.safe_load(Path(TRAIN_RUNS[run]).read_text())["data"]
    variant = data.get("variant") or DATASETS[data["dataset"]].default_variant
    return data["dataset"], variant


def run_ranks(run):
    """MPI ranks training run ``run`` needs."""
    return _RANKS[run]


def simulation_trials(preset):
    """Trials for ``preset``: its own entry in simulate.trials_per_preset, else the default."""
    overrides = config["simulate"].get("trials_per_preset", {})
    return overrides.get(preset, config["simulate"]["trials"])


def analysis_trials(analysis):
    """Trials for ``analysis``: its entry in analyze.trials_per_analysis, else the default."""
    overrides = config["analyze"].get("trials_per_analysis", {})
    return overrides.get(analysis, config["analyze"]["trials"])


NOTEBOOKS = Path(workflow.basedir) / "workflow" / "notebooks"

#: figure -> its notebook's data inputs (notebook parameter name -> file)
FIGURES = {
    "stability": {"stability": "results/codes/stability.csv"},
    "ye_abbe_table3": {"table": "results/sim/ye-abbe-table3.csv"},
    "gc_mmc_fig1": {"table": "results/sim/gc-mmc-fig1.csv"},
    "coded_reduce_fig2": {"table": "results/sim/coded-reduce.csv"},
    "coded_reduce_theorems": {
        "loads": "results/analysis/coded-reduce-loads.csv",
        "bounds": "results/sim/coded-reduce-theorem2.csv",
    },
    "coded_reduce_fig13": {
        "table": "results/analysis/coded-reduce-digits.csv",
        "times": "results/sim/coded-reduce-cnn.csv",
    },
    "binary_loads": {"table": "results/analysis/binary-loads.csv"},
    "binary_decoding": {"table": "results/analysis/binary-decoding.csv"},
    "binary_heterogeneous": {"table": "results/sim/binary-heterogeneous.csv"},
    "heterogeneous_comm_cost": {
        "table": "results/analysis/heterogeneous-comm-cost.csv"
    },
    "heterogeneous_adversaries": {
        "table": "results/analysis/heterogeneous-adversaries.csv",
        "placement": "results/sim/heterogeneous-placement.csv",
    },
    "berrut_error": {"table": "results/analysis/berrut-error.csv"},
}


if TRAIN_RUNS:
    FIGURES["training"] = {
        "runs": [f"results/train/{run}/summary.json" for run in sorted(TRAIN_RUNS)]
    }


def active_figures():
    """Figures whose inputs the config asks for."""
    wanted = {f"results/sim/{p}.csv" for p in config["simulate"]["presets"]}
    wanted |= {f"results/analysis/{a}.csv" for a in config["analyze"]["names"]}
    wanted |= {"results/codes/stability.csv"}
    wanted |= {f"results/train/{run}/summary.json" for run in TRAIN_RUNS}

    def files(inputs):
        for value in inputs.values():
            yield from [value] if isinstance(value, str) else value

    return sorted(f for f, inputs in FIGURES.items() if set(files(inputs)) <= wanted)


def figure_inputs(wildcards):
    return FIGURES[wildcards.figure]


def papermill_parameters(wildcards, input, output):
    # a parameter with several files (the training runs) is passed comma-separated
    pairs = [
        (name, ",".join(input[name]) if not isinstance(files, str) else input[name])
        for name, files in FIGURES[wildcards.figure].items()
    ]
    pairs += [("png", output.png), ("comparison", output.comparison)]
    return shlex.join(
        word for name, value in pairs for word in ("-p", name, str(value))
    )


def all_outputs():
    return [
        "results/tables/codes.csv",
        "results/codes/stability.csv",
        *expand("results/analysis/{analysis}.csv", analysis=config["analyze"]["names"]),
        *expand("results/sim/{preset}.csv", preset=config["simulate"]["presets"]),
        *expand("results/figures/{figure}.png", figure=active_figures()),
        "results/tables/comparison.csv",
        *expand("results/train/{run}/summary.json", run=sorted(TRAIN_RUNS)),
    ]
