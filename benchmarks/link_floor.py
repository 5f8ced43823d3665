"""Measured iteration time over the link-limited floor, per run of an experiment on links.

For every run directory under RUNS (``summary.json``, ``log.jsonl``, ``run.yaml`` with
``network.links``), the median over iterations (the first ``--skip`` left out) of the measured
iteration time, of ``gradcode.runlogs.timings.link_floor`` (one model copy through the slower
link, the slowest used worker's logged work, the used results through the master's port or a
worker's link; a tree code's is the tree's own, ``tree_link_floor``) and of their ratio, with
the floor's parts, and what the master's ``n`` separate model copies take through its port
alone. Issue 20's goal: ratio <= 1.1.

    python benchmarks/link_floor.py results/train/cluster-link-floor [--skip 2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from gradcode.runfile.config import load_config
from gradcode.runfile.plan import build_plan
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import link_floor
from gradcode.timing.links import PAYLOAD_FRACTION


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="the experiment's folder of run folders")
    parser.add_argument("--skip", type=int, default=2, help="first iterations left out")
    args = parser.parse_args()
    print(
        f"{'run':12s} {'measured s':>10s} {'floor s':>8s} {'ratio':>6s} {'download':>8s} "
        f"{'work':>6s} {'upload':>7s} {'n copies':>8s}"
    )
    for summary in sorted(args.runs.glob("*/summary.json")):
        folder = summary.parent
        config = load_config(folder / "run.yaml")
        links = config.network.links if config.network is not None else None
        if links is None:
            raise SystemExit(f"{folder}/run.yaml: no network.links, no floor")
        plan = build_plan(config)
        features = json.loads(summary.read_text())["data"]["features"]
        records = read_log(folder)[args.skip :]
        floors = [link_floor(plan.code, record, links, features) for record in records]
        measured = np.array([record["iteration_time"] for record in records])
        total = np.array([floor.total for floor in floors])
        copies = plan.workers * 8 * (features + 1) / (links.master_rate * PAYLOAD_FRACTION)
        print(
            f"{folder.name:12s} {np.median(measured):10.3f} {np.median(total):8.3f} "
            f"{np.median(measured / total):6.2f} {np.median([f.download for f in floors]):8.3f} "
            f"{np.median([f.work for f in floors]):6.3f} "
            f"{np.median([f.upload for f in floors]):7.3f} {copies:8.3f}"
        )


if __name__ == "__main__":
    main()
