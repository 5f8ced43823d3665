"""Numerical stability: max relative decode error over straggler patterns versus n (5 to 40).

Writes the CSV the workflow plots (``gradcode.codes.stability``) and prints, per scheme family,
the error at a few sizes and the largest n whose error stays below 1e-8.

    python benchmarks/stability.py --out results/codes/stability.csv
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from gradcode.codes.stability import stability_rows, write_stability_csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--n-min", type=int, default=5)
    parser.add_argument("--n-max", type=int, default=40)
    parser.add_argument("--patterns", type=int, default=30)
    args = parser.parse_args()
    rows = list(stability_rows(range(args.n_min, args.n_max + 1), patterns=args.patterns))
    write_stability_csv(args.out, rows)
    by_family: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_family[row["family"]].append(row)
    shown = [n for n in (5, 10, 20, 30, 40) if args.n_min <= n <= args.n_max]
    print(f"{'family':26s}" + "".join(f"{'n=' + str(n):>11s}" for n in shown) + "  sound up to")
    for family, family_rows in by_family.items():
        errors = {row["n"]: row["max_relative_error"] for row in family_rows}
        limit = None  # largest n such that every n' <= n stays below 1e-8
        for n in sorted(errors):
            if errors[n] >= 1e-8:
                break
            limit = n
        print(f"{family:26s}" + "".join(f"{errors[n]:11.1e}" for n in shown) + f"  {limit}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
