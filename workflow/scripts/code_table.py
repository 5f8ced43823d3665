"""Collect the verification reports into one CSV table (one row per configured code)."""

import csv
import json
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

rows = []
for path in snakemake.input:  # noqa: F821
    report = json.loads(Path(path).read_text())
    rows.append(
        {
            "id": Path(path).stem,
            "scheme": report["scheme"],
            "params": json.dumps(report["params"], sort_keys=True),
            "patterns_checked": report["patterns_checked"],
            "patterns_total": report["patterns_total"],
            "exhaustive": report["exhaustive"],
            "max_relative_error": report["max_relative_error"],
            "worst_condition_number": report["worst_condition_number"],
            "mean_load": sum(report["loads"]) / len(report["loads"]),
            "max_load": max(report["loads"]),
            "message_fraction": report["message_fraction"],
            "passed": report["passed"],
        }
    )
with open(snakemake.output[0], "w", newline="") as handle:  # noqa: F821
    writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
