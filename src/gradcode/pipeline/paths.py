"""Where the workflow's outputs go: every path under ``results/``, named once.

The rules (``workflow/rules/*.smk``, through ``common.smk``), the figure registry
(``workflow/figures.yaml`` names these as ``paths.NAME`` or ``paths.NAME(argument)``, resolved
by ``gradcode.pipeline.figures``), the pipeline's modules and the notebooks' default parameters
read them here, so an output moves by one edit. A template's ``{fields}`` are Snakemake
wildcards in a rule, and filled with ``str.format`` or ``fill`` everywhere else. The names of
the files a training run or a prepared data set writes into its folder are the runtime's
(``gradcode.runlogs.log``, ``gradcode.data.provenance``), and so is a table's sidecar's
(``gradcode.sim.table``).
"""

from __future__ import annotations

import string

from gradcode.data.provenance import META_FILE
from gradcode.runlogs.log import LOG_FILE, MODEL_FILE, SUMMARY_FILE
from gradcode.sim.table import sidecar_path

RESULTS = "results"

#: a prepared data set's folder (``gradcode data prepare --out``) and its description
DATA = f"{RESULTS}/data/{{dataset}}/{{variant}}"
DATA_META = f"{DATA}/{META_FILE}"

#: one code's verification (``gradcode codes verify --json``), all of them as a table
CODE_VERIFY = f"{RESULTS}/codes/verify/{{code}}.json"
CODE_TABLE = f"{RESULTS}/tables/codes.csv"
#: the numerical stability study (``gradcode codes stability``)
STABILITY = f"{RESULTS}/codes/stability.csv"

#: an analysis's table (``gradcode analyze``), a preset's or a spec file's simulated table
#: (``gradcode simulate``); each with its sidecar ``TABLE.json`` (``sidecar``)
ANALYSIS = f"{RESULTS}/analysis/{{analysis}}.csv"
SIMULATION = f"{RESULTS}/sim/{{preset}}.csv"
SPEC_SIMULATION = f"{RESULTS}/sim/spec/{{spec}}.csv"

#: the records the commands around a training job write beside its outputs: ``gradcode train
#: inject --record`` (rule train_faults), ``gradcode cluster cut --record`` (train_cut),
#: ``gradcode cluster lose --record`` (train_lost), ``gradcode cluster latency --record``
#: (train_latency)
KILLS_FILE = "kills.json"
CUT_FILE = "cut.json"
LOST_FILE = "lost.json"
LATENCY_FILE = "latency.json"

#: a training run's folder (run id ``NAME`` or ``EXPERIMENT/NAME``) and what is in it: the
#: workflow's run file, the runtime's outputs, the records of the commands around the job
RUN = f"{RESULTS}/train/{{run}}"
RUN_FILE = f"{RUN}/run.yaml"
RUN_SUMMARY = f"{RUN}/{SUMMARY_FILE}"
RUN_LOG = f"{RUN}/{LOG_FILE}"
RUN_MODEL = f"{RUN}/{MODEL_FILE}"
RUN_KILLS = f"{RUN}/{KILLS_FILE}"
RUN_CUT = f"{RUN}/{CUT_FILE}"
RUN_LOST = f"{RUN}/{LOST_FILE}"
RUN_LATENCY = f"{RUN}/{LATENCY_FILE}"

#: a fit study's folder: the fitted timing model, the codes ranked under it (JSON and CSV)
FIT = f"{RESULTS}/fit/{{study}}"
FIT_FITTED = f"{FIT}/fitted.yaml"
FIT_RECOMMENDATION = f"{FIT}/recommend.json"
FIT_RECOMMENDATION_TABLE = f"{FIT}/recommend.csv"
#: the run id of a study's recommended code, trained like every run
RECOMMENDED_RUN_ID = "{study}/recommended"
RECOMMENDED_RUN_FILE = RUN_FILE.format(run=RECOMMENDED_RUN_ID)
RECOMMENDED_SUMMARY = RUN_SUMMARY.format(run=RECOMMENDED_RUN_ID)

#: a figure, the record of the config and commit that drew it (gradcode.pipeline.provenance),
#: its executed notebook, its paper-versus-reproduced rows; all rows in one table
FIGURE = f"{RESULTS}/figures/{{figure}}.png"
FIGURE_PROVENANCE = f"{RESULTS}/figures/{{figure}}.json"
FIGURE_NOTEBOOK = f"{RESULTS}/notebooks/{{figure}}.ipynb"
FIGURE_COMPARISON = f"{RESULTS}/tables/compare/{{figure}}.csv"
COMPARISON_TABLE = f"{RESULTS}/tables/comparison.csv"

#: the link probe of a config's ``cluster.links`` (its ``--out`` folder holds both)
CLUSTER_LINKS = f"{RESULTS}/cluster/links/links.json"
CLUSTER_LINKS_TABLE = f"{RESULTS}/cluster/links/links.csv"
#: the rate sweep of ``cluster.links.rates``: one probe a stated rate, the rates' record, and
#: the sweep's index (the figure ``cluster_link_rates`` reads)
LINK_RATES = f"{RESULTS}/cluster/link-rates"
LINK_RATE = f"{LINK_RATES}/{{rate}}"
LINK_RATE_LINKS = f"{LINK_RATE}/links.json"
LINK_RATE_TABLE = f"{LINK_RATE}/links.csv"
LINK_RATE_RECORD = f"{LINK_RATE}/rate.json"
CLUSTER_LINK_RATES = f"{LINK_RATES}/index.json"


def sidecar(table: str) -> str:
    """The JSON description ``gradcode simulate`` and ``gradcode analyze`` write beside
    ``table``."""
    return str(sidecar_path(table))


def log(name: str) -> str:
    """The log of a rule's job, ``name`` being its path under the log folder, without
    ``.log`` (a rule's wildcards may be in it)."""
    return f"{RESULTS}/logs/{name}.log"


#: where every job's ``benchmark:`` file goes (``gradcode.pipeline.rule_times`` reads them)
BENCHMARKS = f"{RESULTS}/benchmarks"
#: their table, by rule, written when the workflow succeeds
RULE_TIMES = f"{RESULTS}/logs/rule-times.md"


def benchmark(rule: str, name: str) -> str:
    """The ``benchmark:`` file of rule ``rule``'s job, ``name`` as in ``log`` (Snakemake
    writes its wall time, memory and CPU time there; the folder is the rule's, so the time
    table adds them up by rule)."""
    return f"{BENCHMARKS}/{rule}/{name}.tsv"


def fields(template: str) -> list[str]:
    """The names of ``template``'s fields, in order."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def fill(template: str, *values: str) -> str:
    """``template`` with its fields filled by ``values`` in order: ``fill(FIGURE, "training")``
    (the figure registry's ``paths.FIGURE(training)``, and a notebook parameter's default in
    a form papermill reads: one ``=`` a line)."""
    names = fields(template)
    if len(values) != len(names):
        raise ValueError(
            f"{template!r} has {len(names)} fields ({', '.join(names)}), not {len(values)}"
        )
    return template.format(**dict(zip(names, values, strict=True)))
