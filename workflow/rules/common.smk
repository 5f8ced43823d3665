# Config validation and helpers shared by the rule files.
import json
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from gradcode.blas import BLAS_VARIABLES
from gradcode.codes import build
from gradcode.data.location import DATA_DIR_ENV
from gradcode.pipeline import bytecode, paths, rule_times
from gradcode.pipeline.captions import check_captions, load_captions
from gradcode.pipeline.fit_studies import collect_studies, recommended_plan
from gradcode.pipeline.figures import (
    FigureTable,
    check_notebooks,
    load_registry,
    summaries,
    wanted_files,
)
from gradcode.pipeline.faults import (
    ULFM_LAUNCHER,
    lose_arguments,
    node_loss_runs,
    runs_pattern,
    tolerant_runs,
)
from gradcode.pipeline.resources import (
    DataShape,
    mem_mb_per_cpu,
    runtime_minutes,
)
from gradcode.pipeline.latency import latency_runs
from gradcode.pipeline.provenance import applied_config_files, provenance_arguments
from gradcode.pipeline.runs import collect_runs
from gradcode.pipeline.specs import collect_specs
from gradcode.pipeline.stand_ins import resolve_data
from gradcode.plugins import one_line_plugin_warnings
from gradcode.rate import Rate
from gradcode.launch.mpilib import HYDRA

one_line_plugin_warnings()
validate(config, schema="../schemas/config.schema.yaml")

#: MPICH's launcher, found on the job's PATH (profiles may set another `mpi` resource)
MPIEXEC = HYDRA
#: the environment prefix that gives every MPI rank one BLAS thread (gradcode.blas)
BLAS_ONE_THREAD = " ".join(f"{variable}=1" for variable in BLAS_VARIABLES)

CODES = {entry["id"]: entry for entry in config["codes"]["verify"]}


def _check_code_parameters():
    """Unknown schemes (the schema cannot list plug-ins) and impossible code parameters fail
    here, at DAG construction, naming the config key."""
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


# Training runs (run files: id = file stem; experiments: id = <experiment>/<run>), validated
# at DAG construction by gradcode.pipeline.runs.
_RUNS = collect_runs(
    config["train"]["runs"], config["train"]["experiments"], workflow.basedir
)
#: run id -> (source file, run document as in a run file)
TRAIN_RUNS = _RUNS.runs
#: experiment name -> its run ids, in file order
EXPERIMENTS = _RUNS.experiments
#: runs with faults.tolerate: on Open MPI with ULFM, workers killed from outside (train_faults)
TOLERANT_RUNS = tolerant_runs(_RUNS)
#: runs with faults.lose_node: a node of the emulated cluster lost mid-run (train_lost)
NODE_LOSS_RUNS = node_loss_runs(_RUNS)
#: runs whose links state a latency -> it: on the emulated cluster at it (train_latency)
LATENCY_RUNS = latency_runs(_RUNS)
for _run in sorted(set(LATENCY_RUNS) & set(TOLERANT_RUNS + NODE_LOSS_RUNS)):
    raise WorkflowError(
        f"run {_run}: network.links.latency together with faults is not supported yet "
        "(the latency's command and the faults' launcher would both wrap the job)"
    )


#: fit studies of config ``fit`` (gradcode.pipeline.fit_studies), by name
FIT_STUDIES = collect_studies(config.get("fit", {}), _RUNS)
#: run id of each study's recommended code (trained by rule train) -> the study
RECOMMENDED_RUNS = {
    f"{study.name}/recommended": study for study in FIT_STUDIES.values()
}
for _study in FIT_STUDIES:
    if _study in EXPERIMENTS:
        raise WorkflowError(
            f"config fit.{_study}: an experiment has that name; rename it"
        )


def fit_study(wildcards):
    return FIT_STUDIES[wildcards.study]


def calibration_logs(wildcards):
    """The logs a fit study fits (rule fit_timing)."""
    return [paths.RUN_LOG.format(run=run) for run in fit_study(wildcards).calibrate]


def _source_run(run):
    """The config's run ``run`` trains like: itself, or a study's first calibration run."""
    study = RECOMMENDED_RUNS.get(run)
    return run if study is None else study.calibrate[0]


def run_data_folder(run):
    """The prepared data set's folder training run ``run`` trains on."""
    dataset, variant = run_data(run)
    return paths.DATA.format(dataset=dataset, variant=variant)


def run_data(run):
    """(dataset, variant) that training run ``run`` trains on (a stand-in if need be)."""
    data = TRAIN_RUNS[_source_run(run)][1]["data"]
    return resolve_data(
        data["dataset"], data.get("variant"), config["data"]["stand_ins"]
    )


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
                f"gradcode: {real} raw files absent ({DATA_DIR_ENV}); training on the "
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
    study = RECOMMENDED_RUNS.get(run)
    return _RUNS.ranks[run] if study is None else study.workers + 1


def run_plan(run):
    """The plan of run ``run``; None for a recommended run until its run file exists."""
    if run not in RECOMMENDED_RUNS:
        return _RUNS.plan(run)
    path = Path(paths.RUN_FILE.format(run=run))
    return recommended_plan(path) if path.is_file() else None


def _run_shape(run):
    """The size of the data ``run`` trains on (its prepared meta.json); None until prepared:
    resources are computed again just before a job is submitted, once its data exists.
    """
    dataset, variant = run_data(run)
    meta = Path(paths.DATA_META.format(dataset=dataset, variant=variant))
    if not meta.is_file():
        return None
    return DataShape.from_meta(json.loads(meta.read_text()))


def train_mem_mb_per_cpu(wildcards, attempt):
    """--mem-per-cpu of a training job (gradcode.pipeline.resources), more on a retry."""
    shape, plan = _run_shape(wildcards.run), run_plan(wildcards.run)
    return (
        None if shape is None or plan is None else mem_mb_per_cpu(plan, shape, attempt)
    )


def train_runtime(wildcards):
    """Minutes a training job asks for (gradcode.pipeline.resources)."""
    shape, plan = _run_shape(wildcards.run), run_plan(wildcards.run)
    return None if shape is None or plan is None else runtime_minutes(plan, shape)


#: simulation spec files of simulate.specs: id (file stem) -> file, validated
SPECS = collect_specs(config["simulate"]["specs"], workflow.basedir)


def spec_file(wildcards):
    return str(Path(workflow.basedir, SPECS[wildcards.spec]))


def simulation_trials(preset):
    """Trials for ``preset``: its own entry in simulate.trials_per_preset, else the default."""
    overrides = config["simulate"].get("trials_per_preset", {})
    return overrides.get(preset, config["simulate"]["trials"])


def analysis_trials(analysis):
    """Trials for ``analysis``: its entry in analyze.trials_per_analysis, else the default."""
    overrides = config["analyze"].get("trials_per_analysis", {})
    return overrides.get(analysis, config["analyze"]["trials"])


NOTEBOOKS = Path(workflow.basedir) / "workflow" / "notebooks"
# The figure registry is data: workflow/figures.yaml, validated by its schema.
_REGISTRY = load_registry(
    Path(workflow.basedir, "workflow", "figures.yaml"),
    Path(workflow.basedir, "workflow", "schemas", "figures.schema.yaml"),
)
check_notebooks(_REGISTRY, [path.stem for path in NOTEBOOKS.glob("*.py")])
_FIGURES = FigureTable.build(_REGISTRY, _RUNS, SPECS, cluster="cluster" in config)
#: figure -> its notebook's data inputs (notebook parameter name -> file)
FIGURES = _FIGURES.inputs
_WANTED = wanted_files(config, _RUNS, SPECS)
for _figure, _missing in _FIGURES.left_out(_WANTED).items():
    print(
        f"gradcode: figure {_figure} left out: the config does not produce {_missing}",
        file=sys.stderr,
    )


# Every figure's caption in the report: workflow/report/captions.yaml, validated by its schema.
_CAPTIONS = load_captions(
    Path(workflow.basedir, "workflow", "report", "captions.yaml"),
    Path(workflow.basedir, "workflow", "schemas", "captions.schema.yaml"),
)
# only figures with a notebook: a user's experiment missing from the registry names a figure
# no notebook draws (check_notebooks allows none beyond the registry's), so none is rendered
check_captions(
    _CAPTIONS,
    [
        f
        for f, notebook in _FIGURES.notebooks.items()
        if (NOTEBOOKS / f"{notebook}.py").is_file()
    ],
)


def figure_caption(wildcards):
    """The report's caption of a figure, with the data set each of its runs trained on."""
    figure = wildcards.figure
    files = set()
    for value in FIGURES[figure].values():
        files |= {value} if isinstance(value, str) else set(value)
    trained_on = {
        run: (TRAIN_RUNS[_source_run(run)][1]["data"]["dataset"], run_data(run)[0])
        for run in [*TRAIN_RUNS, *RECOMMENDED_RUNS]
        if summaries([run])[0] in files
    }
    return _CAPTIONS[figure].text(figure, _FIGURES.notebooks[figure], trained_on)


#: gradcode.pipeline.provenance's options (the figure rule's parameter): this invocation's
#: config files in the order they applied, relative to the checkout, and its --config values
FIGURE_PROVENANCE = provenance_arguments(
    applied_config_files(
        workflow.configfiles,
        workflow.overwrite_configfiles,
        workflow.config_settings.replace_workflow_config,
        workflow.basedir,
    ),
    dict(workflow.config_settings.config),
)


def figure_notebook(wildcards):
    return f"{NOTEBOOKS}/{_FIGURES.notebooks[wildcards.figure]}.py"


def active_figures():
    """Figures whose inputs the config asks for."""
    return _FIGURES.active(_WANTED)


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
        paths.CODE_TABLE,
        paths.STABILITY,
        *expand(paths.ANALYSIS, analysis=config["analyze"]["names"]),
        *expand(paths.SIMULATION, preset=config["simulate"]["presets"]),
        *expand(paths.SPEC_SIMULATION, spec=sorted(SPECS)),
        *expand(paths.FIGURE, figure=active_figures()),
        paths.COMPARISON_TABLE,
        *expand(paths.RUN_SUMMARY, run=sorted(TRAIN_RUNS)),
        *[path for study in FIT_STUDIES.values() for path in study.outputs()],
    ]


def cluster_probe_args(links):
    """The link probe's options from config cluster.links (its rates checked at DAG
    construction, naming the key, and passed on in their canonical spelling)."""
    words = [
        "--rate",
        str(Rate.parse(links["rate"], "config cluster.links.rate")),
        "--sizes",
        links.get("sizes", "64KiB,256KiB,1MiB,4MiB"),
    ]
    if links.get("master_rate"):
        master = Rate.parse(links["master_rate"], "config cluster.links.master_rate")
        words += ["--master-rate", str(master)]
    words += ["--repeats", str(links.get("repeats", 3))]
    return shlex.join(words)


def cluster_link_rates(links):
    """config cluster.links.rates, each checked as gradcode cluster rate will (at DAG
    construction, naming the key), in their canonical spelling (100mbit: a folder's name, and
    12.5MB/s the same rate)."""
    from gradcode.cluster.network.rerate import parse_sweep_rate

    rates = []
    for index, rate in enumerate(links.get("rates") or []):
        key = f"config cluster.links.rates[{index}]"
        canonical = str(parse_sweep_rate(rate, key))
        if canonical in rates:
            raise ValueError(
                f"{key}: {rate!r} is {canonical}, which the list already has"
            )
        rates.append(canonical)
    return rates


def cluster_rate_sweep(links, mpi, tasks):
    """The rate sweep as one shell command: for each rate of cluster.links.rates in turn,
    the link probe as an MPI job (`mpi` -n `tasks`) inside gradcode cluster rate, every
    node's link (the master's too) at that rate (env: `mpi` may start with assignments)
    """
    steps = []
    for rate in cluster_link_rates(links):
        out = paths.LINK_RATE.format(rate=rate)
        record = paths.LINK_RATE_RECORD.format(rate=rate)
        limits = shlex.join(["--rate", rate, "--master-rate", rate, "--record", record])
        probe = cluster_probe_args({**links, "rate": rate, "master_rate": rate})
        steps.append(
            f"gradcode cluster rate {limits}"
            f" -- env {mpi} -n {tasks} python -m gradcode.train.linkprobe"
            f" --out {shlex.quote(out)} {probe}"
        )
    return " && ".join(steps)


def cut_runs_pattern(cut):
    """The run ids of the experiment config cluster.cut names (a wildcard constraint)."""
    if cut["experiment"] not in EXPERIMENTS:
        raise ValueError(
            f"config cluster.cut.experiment: {cut['experiment']!r} is not among "
            f"train.experiments ({', '.join(EXPERIMENTS) or 'none'})"
        )
    return "|".join(re.escape(run) for run in EXPERIMENTS[cut["experiment"]])


def cluster_lose_args(run):
    """gradcode cluster lose's options for ``run``'s faults.lose_node (log and record come
    from the rule)."""
    return shlex.join(lose_arguments(_RUNS.plan(run).config))


def cluster_cut_args(cut):
    """gradcode cluster cut's options from config cluster.cut (the log comes from the rule)."""
    return shlex.join(
        [
            cut["node"],
            "--for",
            str(cut["seconds"]),
            "--at-iteration",
            str(cut["at_iteration"]),
        ]
    )
