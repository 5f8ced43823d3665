"""Decoding time of the binary code (paper 003) versus Tandon et al.'s solve, s = n // 4.

For n = 12, 24, 48 and one random straggler pattern, prints the median time of

- ``search``: finding the complete class (binary) versus solving ``a^T B_F = 1^T`` for the
  responders (crc, Tandon's cyclic repetition code, least squares as ``LinearCode._solve``);
- ``decode``: a full decode of a gradient of length ``--length``: binary, crc with the decoding
  vector already cached (Tandon's stored table), crc solving it afresh (which also computes
  the condition number the library records per new responder set);
- the time to build Tandon's whole table, C(n, s) solves, measured at n = 12 and extrapolated
  (C(n, s) x the measured solve time) beyond.

All ratios come from this one run.

    python benchmarks/binary_decoding.py [--length 100000] [--repeats 21]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
from timing import median_time

from gradcode.codes import build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"gradient length {args.length}, float64, median of {args.repeats} runs, s = n // 4")
    print(
        f"{'n':>3s} {'s':>3s} {'bin search us':>13s} {'crc solve us':>12s} {'ratio':>7s} "
        f"{'bin decode ms':>13s} {'crc cached ms':>13s} {'crc solve ms':>12s} "
        f"{'table rows':>10s} {'table build s':>13s}"
    )
    for n in (12, 24, 48):
        s = n // 4
        binary, crc = build("binary", n=n, s=s), build("crc", n=n, s=s)
        stragglers = set(rng.choice(n, size=s, replace=False).tolist())
        alive = tuple(i for i in range(n) if i not in stragglers)
        partials = rng.standard_normal((n, args.length))
        messages = {
            name: {i: code.encode(i, partials[list(code.partitions(i))]) for i in alive}
            for name, code in (("binary", binary), ("crc", crc))
        }
        search = median_time(lambda: binary.decodable_class(alive), args.repeats)  # noqa: B023
        solve = median_time(lambda: crc._solve(alive), args.repeats)  # noqa: B023
        decode_binary = median_time(
            lambda: binary.decode(messages["binary"], args.length),  # noqa: B023
            args.repeats,
        )
        crc.decode(messages["crc"], args.length)  # fills the cache: Tandon's stored row
        decode_cached = median_time(
            lambda: crc.decode(messages["crc"], args.length),  # noqa: B023
            args.repeats,
        )

        def fresh() -> None:
            crc._cache.clear()  # noqa: B023
            crc.decode(messages["crc"], args.length)  # noqa: B023

        decode_fresh = median_time(fresh, args.repeats)
        rows = math.comb(n, s)
        if n == 12:
            start = time.perf_counter()
            for dead in itertools.combinations(range(n), s):
                crc._solve(tuple(i for i in range(n) if i not in dead))
            build_time, how = time.perf_counter() - start, "measured"
        else:
            build_time, how = rows * solve, "extrapolated"
        print(
            f"{n:3d} {s:3d} {search * 1e6:13.1f} {solve * 1e6:12.1f} {solve / search:7.1f} "
            f"{decode_binary * 1e3:13.3f} {decode_cached * 1e3:13.3f} {decode_fresh * 1e3:12.3f} "
            f"{rows:10d} {build_time:13.3g} ({how})"
        )
        decoded = binary.decode(messages["binary"], args.length)
        reference = partials.sum(axis=0)
        error = np.linalg.norm(decoded - reference) / np.linalg.norm(reference)
        error_crc = np.linalg.norm(crc.decode(messages["crc"], args.length) - reference)
        print(
            f"    decode ratios: crc cached / binary {decode_cached / decode_binary:.2f}, "
            f"crc fresh / binary {decode_fresh / decode_binary:.2f}; relative error binary "
            f"{error:.1e}, crc {error_crc / np.linalg.norm(reference):.1e}"
        )


if __name__ == "__main__":
    main()
