"""The rate sweep's index (rule cluster_link_rates_index): for every stated rate, in config
order, its probe's links.json and gradcode cluster rate's record, as paths relative to the
index's folder; the figure cluster_link_rates reads it (gradcode.figures.cluster.read_sweep).
"""

import os
import sys
from pathlib import Path

from gradcode.atomic import write_json

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821

out = Path(snakemake.output[0])  # noqa: F821
rates = snakemake.params.rates  # noqa: F821
links, records = snakemake.input.links, snakemake.input.records  # noqa: F821
entries = [
    {
        "rate": rate,
        "links": os.path.relpath(probe, out.parent),
        "record": os.path.relpath(record, out.parent),
    }
    for rate, probe, record in zip(rates, links, records, strict=True)
]
write_json(out, {"rates": entries})
