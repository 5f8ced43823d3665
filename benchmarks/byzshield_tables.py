"""ByzShield's Tables 3-6 (MLSys 2021): the time of the exact worst-case search per table, and
its speed-up over the exhaustive search on cases both finish, in one run.

For each table of ``gradcode.analysis.byzshield_distortion`` (its placement and every ``q``
the paper lists), the wall and CPU seconds of ``worst_distortions`` (every ``q`` at once) and
of the same search for the FRC column (code ``detox``). Then, on Table 3 (``K = 15``, every
``q <= 7``) and Table 5 (``K = 35``, ``q <= 5``: ``C(35, 5) = 324,632`` placements, the
largest the former analysis tried), the exhaustive ``worst_distortion`` (one ``q`` at a time,
every placement) against ``worst_distortions``, both timed here, their ratio printed and
their results compared.

    python benchmarks/byzshield_tables.py
"""

from __future__ import annotations

import time

from gradcode.analysis.byzshield_distortion import PAPER, TABLES
from gradcode.codes import build
from gradcode.codes.distortion import worst_distortion, worst_distortions


def timed(work):
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    print("table               K   q_max  search wall/cpu s   FRC wall/cpu s")
    for table, (source, placement) in TABLES.items():
        _, l, r, printed = PAPER[source]
        code = build("byzshield", l=l, r=r, placement=placement)
        q_max = max(printed)
        _, wall, cpu = timed(lambda code=code, q_max=q_max: worst_distortions(code, q_max))
        detox = build("detox", n=code.n, r=r)
        _, frc_wall, frc_cpu = timed(lambda d=detox, q=q_max: worst_distortions(d, q))
        print(
            f"{table:18s} {code.n:3d} {q_max:6d} {wall:8.2f} / {cpu:5.2f}"
            f"       {frc_wall:6.2f} / {frc_cpu:5.2f}"
        )
    for l, r, q_max in [(5, 3, 7), (7, 5, 5)]:
        code = build("byzshield", l=l, r=r)
        old, old_wall, old_cpu = timed(
            lambda c=code, q=q_max: [worst_distortion(c, k) for k in range(q + 1)]
        )
        new, new_wall, new_cpu = timed(lambda c=code, q=q_max: worst_distortions(c, q))
        same = [d.distorted for d in old] == [d.distorted for d in new]
        print(
            f"K = {code.n}, q <= {q_max}: exhaustive {old_wall:.2f} s wall ({old_cpu:.2f} cpu), "
            f"class search {new_wall:.3f} s ({new_cpu:.3f}); ratio {old_wall / new_wall:.0f} "
            f"wall, {old_cpu / new_cpu:.0f} cpu; same c_max: {same}"
        )


if __name__ == "__main__":
    main()
