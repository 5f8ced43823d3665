# Config validation and helpers shared by the rule files.
import functools
import os
import shlex
import sys
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from gradcode.blas import BLAS_VARIABLES
from gradcode.codes import build
from gradcode.data import DATASETS
from gradcode.data.errors import DataError, OptionError
from gradcode.data.prepare import find_inputs
from gradcode.train.config import ConfigError, parse_config
from gradcode.train.experiment import load_experiment
from gradcode.train.plan import build_plan
from gradcode.yamlfile import read_yaml

validate(config, schema="../schemas/config.schema.yaml")

#: the environment prefix that gives every MPI rank one BLAS thread (gradcode.blas)
BLAS_ONE_THREAD = " ".join(f"{variable}=1" for variable in BLAS_VARIABLES)

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


# Training runs: run files (id = file stem) and experiments (id = <experiment>/<run>).
#: run id -> (source file, run document as in a run file)
TRAIN_RUNS = {}
#: experiment name -> its run ids, in file order
EXPERIMENTS = {}
#: experiment name -> its file
EXPERIMENT_FILES = {}
_RANKS = {}
#: real data set -> its labelled stand-in, used when the real files are absent
STAND_INS = {"amazon": "amazon-standin", "gisette": "gisette-standin"}


def _add_run(run_id, source, document, world_size, where):
    if run_id in TRAIN_RUNS:
        raise ValueError(f"{where}: run {run_id!r} is defined twice")
    _RANKS[run_id] = world_size
    data = document["data"]
    extra = sorted(set(data) - {"dataset", "variant", "trim", "partition_seed"})
    if "dataset" not in data or extra:
        raise ValueError(
            f"{where}: data must name dataset and variant only (prepared by the workflow); "
            f"got {sorted(data)}"
        )
    TRAIN_RUNS[run_id] = (source, document)


def _collect_training_runs():
    """Run files and experiments are validated at DAG construction, naming the config key."""
    for index, path in enumerate(config["train"]["runs"]):
        where = f"config train.runs[{index}] ({path})"
        try:
            document = read_yaml(_repo_path(path), ConfigError)
            plan = build_plan(parse_config(document, default_name=Path(path).stem))
        except ConfigError as error:
            raise ValueError(f"{where}: {error}") from None
        _add_run(Path(path).stem, _repo_path(path), document, plan.world_size, where)
    for index, path in enumerate(config["train"]["experiments"]):
        where = f"config train.experiments[{index}] ({path})"
        try:
            experiment = load_experiment(_repo_path(path))
        except ConfigError as error:
            raise ValueError(f"{where}: {error}") from None
        if experiment.name in EXPERIMENTS or experiment.name in TRAIN_RUNS:
            raise ValueError(
                f"{where}: experiment name {experiment.name!r} is used twice"
            )
        EXPERIMENTS[experiment.name] = []
        EXPERIMENT_FILES[experiment.name] = _repo_path(path)
        for run, document in experiment.runs.items():
            run_id = f"{experiment.name}/{run}"
            _add_run(
                run_id,
                _repo_path(path),
                document,
                experiment.world_sizes[run],
                f"{where} runs.{run}",
            )
            EXPERIMENTS[experiment.name].append(run_id)


_collect_training_runs()


@functools.cache  # input functions ask once per job; the files do not change during a run
def _raw_files_present(dataset, variant):
    spec = DATASETS[dataset]
    if not spec.variants[variant]:
        return True
    root = os.environ.get("GRADCODE_DATA_DIR")
    if not root:
        return False
    try:
        find_inputs(spec, variant, [Path(root) / spec.raw_subdir])
    except (DataError, OptionError):
        return False
    return True


def resolve_data(dataset, variant):
    """The data set the DAG prepares: the real one, or its stand-in when its files are absent."""
    variant = variant or DATASETS[dataset].default_variant
    if _raw_files_present(dataset, variant):
        return dataset, variant
    policy = config["data"]["stand_ins"]
    where = "$GRADCODE_DATA_DIR/" + (DATASETS[dataset].raw_subdir or dataset)
    if policy == "never" or dataset not in STAND_INS:
        raise ValueError(
            f"config data.stand_ins={policy}: the raw files of {dataset} ({variant}) are not "
            f"in {where} and no stand-in may replace them"
        )
    stand_in = STAND_INS[dataset]
    if variant not in DATASETS[stand_in].variants:
        raise ValueError(
            f"{stand_in} has no variant {variant!r} to stand in for {dataset}"
        )
    return stand_in, variant


def run_data(run):
    """(dataset, variant) that training run ``run`` trains on (a stand-in if need be)."""
    data = TRAIN_RUNS[run][1]["data"]
    return resolve_data(data["dataset"], data.get("variant"))


def _report_stand_ins():
    used = sorted(
        {
            (TRAIN_RUNS[run][1]["data"]["dataset"], run_data(run)[0])
            for run in TRAIN_RUNS
        }
    )
    for real, actual in used:
        if real != actual:
            print(
                f"gradcode: {real} raw files absent (GRADCODE_DATA_DIR); training on the "
                f"labelled stand-in {actual}",
                file=sys.stderr,
            )


_report_stand_ins()


def local_cores():
    """Every local core (training jobs run alone); 1 where snakemake has no core count, as
    under a cluster executor, where each rank gets its own CPU through `tasks`."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


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


_PLAIN_RUNS = sorted(run for run in TRAIN_RUNS if "/" not in run)
if _PLAIN_RUNS:
    FIGURES["training"] = {
        "runs": [f"results/train/{run}/summary.json" for run in _PLAIN_RUNS]
    }
#: experiment -> [(figure, notebook, further inputs)] drawn from its runs (default: one
#: figure whose notebook is named after the experiment). A notebook gets `runs` (the
#: summaries, comma-separated) and `experiment` (the experiment file, with the paper's numbers).
EXPERIMENT_FIGURES = {
    "ye-abbe-amazon": [
        ("ye_abbe_fig3", "ye_abbe_fig3", {"table": "results/sim/ye-abbe-fig3.csv"}),
        ("ye_abbe_fig4", "ye_abbe_fig4", {}),
    ],
    **{
        f"coded-reduce-fig{number}": [
            (f"coded_reduce_fig{number}", "coded_reduce_convergence", {})
        ]
        for number in (8, 9, 10, 11, 12)
    },
}
#: figure -> notebook, where they differ
FIGURE_NOTEBOOKS = {}
for _experiment, _runs in EXPERIMENTS.items():
    _default = _experiment.replace("-", "_")
    _figures = EXPERIMENT_FIGURES.get(_experiment, [(_default, _default, {})])
    for _figure, _notebook, _inputs in _figures:
        FIGURES[_figure] = {
            "runs": [f"results/train/{run}/summary.json" for run in _runs],
            "experiment": EXPERIMENT_FILES[_experiment],
            **_inputs,
        }
        FIGURE_NOTEBOOKS[_figure] = _notebook


def figure_notebook(wildcards):
    return f"{NOTEBOOKS}/{FIGURE_NOTEBOOKS.get(wildcards.figure, wildcards.figure)}.py"


def active_figures():
    """Figures whose inputs the config asks for."""
    wanted = {f"results/sim/{p}.csv" for p in config["simulate"]["presets"]}
    wanted |= {f"results/analysis/{a}.csv" for a in config["analyze"]["names"]}
    wanted |= {"results/codes/stability.csv"}
    wanted |= {f"results/train/{run}/summary.json" for run in TRAIN_RUNS}
    wanted |= set(EXPERIMENT_FILES.values())

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
