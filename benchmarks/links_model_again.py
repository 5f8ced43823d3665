"""A finished run on links predicted again by the current ``shared-links`` model of runs on
links (``gradcode.runlogs.timings.predicted_links_time``), beside the prediction its fidelity
record holds (what the model said when the run ended): the measured times are the run's, only
the model moves.

    python benchmarks/links_model_again.py fidelity-n156/UMW-k64 [more run folders]

Each folder is a run's ``--out`` (``summary.json``, ``log.jsonl``, ``model.npy``) with its run
file beside it as ``FOLDER.yaml`` (what ``benchmarks/fidelity_dilation.py`` writes). The first
logged iteration is left out, as the record leaves it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from gradcode.runfile.config import load_config
from gradcode.runfile.plan import build_plan
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import predicted_links_time


def again(folder: Path) -> dict:
    config = load_config(folder.with_suffix(".yaml"))
    if config.network is None or config.network.links is None:
        raise SystemExit(f"{folder.with_suffix('.yaml')}: network.links: not stated")
    summary = json.loads((folder / "summary.json").read_text())
    features = int(np.load(folder / "model.npy").size)
    records = read_log(folder)[1:]
    ways = {
        "distribution": summary.get("distribution", {}).get("way", "isend"),
        "collection": summary.get("collection", {}).get("way", "push"),
    }
    code = build_plan(config).code
    links = config.network.links
    predicted = [predicted_links_time(code, r, links, features, **ways) for r in records]
    measured = float(np.mean([r["iteration_time"] for r in records]))
    recorded = summary["fidelity"]["model"]
    return {
        "run": folder.name,
        "measured": measured,
        "recorded": recorded.get("predicted"),
        "now": float(np.mean(predicted)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="run folders (--out of a run)")
    args = parser.parse_args()
    print(f"{'run':16s} {'measured':>9s} {'recorded':>9s} {'ratio':>6s} {'now':>9s} {'ratio':>6s}")
    for folder in args.runs:
        row = again(folder)
        old = row["recorded"]
        print(
            f"{row['run']:16s} {row['measured']:9.4f} "
            f"{old if old is not None else float('nan'):9.4f} "
            f"{row['measured'] / old if old else float('nan'):6.3f} "
            f"{row['now']:9.4f} {row['measured'] / row['now']:6.3f}"
        )


if __name__ == "__main__":
    main()
