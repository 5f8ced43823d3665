"""Decode cost of every exact scheme at n = 20, l = 343,474 (Ye & Abbe's gradient length).

For one decodable responder set per scheme, prints the median time of ``decode`` for a set
already seen (coefficients cached) divided by the median time of ``np.sum`` over the stacked
received messages, the same ratio with the stacking counted in the denominator, and the cost of
the first (uncached) decode. Target: cached ratio <= 1.5. All timings come from this one run.

    python benchmarks/decode_cost.py [--length 343474] [--repeats 15]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from timing import median_time

from gradcode.codes import build

#: (label, scheme, params): exact schemes at n = 20 workers (coded-reduce: 4 + 16 nodes)
CONFIGS: tuple[tuple[str, str, dict], ...] = (
    ("uncoded", "uncoded", {"n": 20}),
    ("frc s=3", "frc", {"n": 20, "s": 3}),
    ("crc s=3", "crc", {"n": 20, "s": 3}),
    ("ye-abbe d=4 s=3 m=1", "ye-abbe", {"n": 20, "d": 4, "s": 3, "m": 1}),
    ("ye-abbe d=6 s=3 m=3", "ye-abbe", {"n": 20, "d": 6, "s": 3, "m": 3}),
    ("binary s=3", "binary", {"n": 20, "s": 3}),
    (
        "heterogeneous r=6 s=3 a=0",
        "heterogeneous",
        {"placement": [[(i + j) % 20 for j in range(6)] for i in range(20)], "s": 3, "a": 0},
    ),
    (
        "gc-mmc correlated r=5 order=3",
        "gc-mmc",
        {"n": 20, "r": 5, "design": "correlated", "order": 3},
    ),
    ("coded-reduce n=4 L=2 s=1", "coded-reduce", {"n": 4, "L": 2, "s": 1}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=343_474)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"gradient length l = {args.length}, float64, median of {args.repeats} runs")
    header = (
        f"{'scheme':32s} {'msgs':>4s} {'decode ms':>9s} {'sum ms':>7s} {'ratio':>6s} "
        f"{'ratio+stack':>11s} {'first ms':>8s} {'max rel err':>11s}"
    )
    print(header)
    worst = 0.0
    for label, scheme, params in CONFIGS:
        code = build(scheme, **params)
        instance, partials = code.random_instance(rng, args.length)
        pattern = next(code.patterns(exhaustive=False, rng=rng, limit=1))
        messages = code.pattern_messages(instance, pattern, rng)
        start = time.perf_counter()
        decoded = code.decode(messages, args.length)
        first = time.perf_counter() - start
        reference = partials.sum(axis=0)
        error = np.linalg.norm(decoded - reference) / np.linalg.norm(reference)
        decode = median_time(lambda: code.decode(messages, args.length), args.repeats)  # noqa: B023
        stacked = np.stack(list(messages.values()))
        summed = median_time(lambda: np.sum(stacked, axis=0), args.repeats)  # noqa: B023
        stack_and_sum = median_time(
            lambda: np.sum(np.stack(list(messages.values())), axis=0),  # noqa: B023
            args.repeats,
        )
        ratio = decode / summed
        worst = max(worst, ratio)
        print(
            f"{label:32s} {len(messages):4d} {decode * 1e3:9.2f} {summed * 1e3:7.2f} "
            f"{ratio:6.2f} {decode / stack_and_sum:11.2f} {first * 1e3:8.2f} {error:11.2e}"
        )
    print(f"worst cached ratio {worst:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
