# Config validation and helpers shared by the rule files.
import shlex
from pathlib import Path

from snakemake.utils import validate

from gradcode.codes import build

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


def simulation_trials(preset):
    """Trials for ``preset``: its own entry in simulate.trials_per_preset, else the default."""
    overrides = config["simulate"].get("trials_per_preset", {})
    return overrides.get(preset, config["simulate"]["trials"])


NOTEBOOKS = Path(workflow.basedir) / "workflow" / "notebooks"

#: figure -> its notebook's data inputs (notebook parameter name -> file)
FIGURES = {
    "stability": {"stability": "results/codes/stability.csv"},
    "ye_abbe_table3": {"table": "results/sim/ye-abbe-table3.csv"},
    "gc_mmc_fig1": {"table": "results/sim/gc-mmc-fig1.csv"},
}


def active_figures():
    """Figures whose simulation inputs the config asks for."""
    wanted = {f"results/sim/{p}.csv" for p in config["simulate"]["presets"]}
    wanted |= {"results/codes/stability.csv"}
    return sorted(f for f, inputs in FIGURES.items() if set(inputs.values()) <= wanted)


def figure_inputs(wildcards):
    return FIGURES[wildcards.figure]


def papermill_parameters(wildcards, input, output):
    pairs = [(name, input[name]) for name in FIGURES[wildcards.figure]]
    pairs += [("png", output.png), ("comparison", output.comparison)]
    return shlex.join(
        word for name, value in pairs for word in ("-p", name, str(value))
    )


def all_outputs():
    return [
        "results/tables/codes.csv",
        "results/codes/stability.csv",
        *expand("results/sim/{preset}.csv", preset=config["simulate"]["presets"]),
        *expand("results/figures/{figure}.png", figure=active_figures()),
        "results/tables/comparison.csv",
    ]
