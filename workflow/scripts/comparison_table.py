"""Concatenate the notebooks' comparison rows into one table."""

import csv
import sys

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

rows, fields = [], None
for path in snakemake.input:  # noqa: F821
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        fields = fields or reader.fieldnames
        rows.extend(reader)
with open(snakemake.output[0], "w", newline="") as handle:  # noqa: F821
    writer = csv.DictWriter(handle, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
