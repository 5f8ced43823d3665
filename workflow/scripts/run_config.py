"""The workflow's copy of a run file: its data points at the prepared data set of the DAG."""

import sys
from pathlib import Path

import yaml

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

run = yaml.safe_load(Path(snakemake.input.run).read_text())  # noqa: F821
out = Path(snakemake.output[0])  # noqa: F821
# run files resolve relative paths against the working directory, as the workflow does
data = {"prepared": str(snakemake.input.data)}  # noqa: F821
for key in ("trim", "partition_seed"):
    if key in run["data"]:
        data[key] = run["data"][key]
run["data"] = data
out.write_text(yaml.safe_dump(run, sort_keys=False))
