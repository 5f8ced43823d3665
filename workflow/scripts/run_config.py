"""The workflow's copy of a run: its data points at the prepared data set of the DAG.

The run comes from a run file or an experiment (``params.document``, already validated at DAG
construction); its data set may have been replaced by its labelled stand-in (the prepared
data's meta.json says so, and every figure shows it).
"""

import copy
import sys
from pathlib import Path

import yaml

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

run = copy.deepcopy(dict(snakemake.params.document))  # noqa: F821
out = Path(snakemake.output[0])  # noqa: F821
# run files resolve relative paths against the working directory, as the workflow does
data = {"prepared": str(snakemake.input.data)}  # noqa: F821
for key in ("trim", "partition_seed"):
    if key in run["data"]:
        data[key] = run["data"][key]
run["data"] = data
out.write_text(yaml.safe_dump(run, sort_keys=False))
