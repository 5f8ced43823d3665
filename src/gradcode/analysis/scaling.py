"""Paper 001's schemes past one machine: their time per iteration under the ``shared-links``
model at N = 84, 1,000 and 10,000 workers and one-way latencies of 0 to 50 ms.

The schemes are those of paper 001 (Reisizadeh et al.; ``gradcode.sim.presets``' paper-001
presets): UMW (``uncoded``), GC (``crc`` tolerating ``S = N / 4``), RAR
(``ring-allreduce``), SGD (``ignore-stragglers`` waiting for ``N - S``) and CR
(``coded-reduce``, the cyclic code at every parent, as the paper's CompAlloc), each built by
the registry and simulated by ``gradcode.sim.simulate`` on the ``shared-links`` model, so
every time comes from the code's own completion rule.

Parameters. Paper 001's Section IV-B: ``tc = 0.05`` s for a full gradient, ``a = 5e-5`` s a
sample and ``a mu = 1``. On the links that is every link (the master's too, as paper 001 has
one ``tc`` for every port) at 100 Mbit/s and a gradient of ``l = 78,125`` float64s, so that
one result message takes exactly ``tc`` on idle links (``FEATURES``). The data set grows with
the cluster (weak scaling): 78 samples a worker, the paper's ``d = 6552`` on ``N = 84``
(``SAMPLES_PER_WORKER``), so ``N = 84`` is its EC2 setting and 10,000 workers hold 780,000
samples. As in the project's N = 39 runs on the emulated cluster, the master sends every
flat worker a copy of the model through its link (``download``, ``distribution: isend``), a tree
node forwards it to its children, and a ring downloads nothing; results carry the runtime's
96-byte header. Paper 001's own model leaves the download out.

CR's tree (``paper_tree``). CR.Allocate works on an ``(n, L)``-regular tree of
``N = n + n^2 + ... + n^L`` workers with Theorem 1's load ``r_CR`` at every node, and paper
001 sizes its tree to the cluster: ``(4, 3)`` for ``N = 84`` and ``(12, 2)`` for
``N = 156``, the only trees of two or more layers with exactly that many workers. The rule
here: the regular tree of at least two layers with the most workers ``n + ... + n^L <= N``
(a tie: the deeper), which gives the paper's two trees, and ``(31, 2)`` (992 workers) for
1,000 and ``(99, 2)`` (9,900) for 10,000, because no regular tree has exactly 1,000 or
10,000 workers; the ``N - n - ... - n^L`` others idle. Every parent tolerates ``s = round(n
alpha)`` children (at least one) with the paper's Fig. 8 resiliency ``alpha = 1/4``.

Not run (``not_run``): GC at 10,000 workers. Building Tandon et al.'s cyclic code solves one
``S x S`` system per worker, ``O(N S^3)`` with ``S = N / 4``: measured here 1.4 s of CPU for
``N = 500``, 5.3 s for 1,000 and 45 s for 2,000 (8.5 times per doubling there, 16 in the
limit), so 2 to 15 hours of CPU for 10,000, past this study's budget of minutes; its ``N x N``
encoding matrix alone is 800 MB. The model needs only the code's loads and completion rule,
but the registry's code is what the simulator simulates.

``predict`` runs one cluster size at every latency (the codes built once, the model rebuilt
per latency); ``compute`` is ``gradcode analyze coded-reduce-scaling`` (every size, trials
capped by ``TRIAL_BUDGET``). ``benchmarks/scaling_past_one_machine.py`` adds the simulator's
own wall time and peak memory, and the figure.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes.coded_reduce_theory import r_cr, tree_size
from gradcode.errors import UserError
from gradcode.sim import load_spec, simulate
from gradcode.sim.table import ResultRow
from gradcode.timing import model_from_spec

#: the cluster sizes of the study: paper 001's EC2 size, then one and ten thousand
WORKERS = (84, 1000, 10000)
#: one-way latencies (seconds): none, one availability zone, across zones, a continent, the world
LATENCIES = (0.0, 0.0005, 0.002, 0.01, 0.05)
#: paper 001's Fig. 8 resiliency: a quarter of every parent's children, a quarter of all workers
ALPHA = Fraction(1, 4)
#: paper 001's d = 6552 samples on N = 84 workers (Section IV-A): the data grow with the cluster
SAMPLES_PER_WORKER = 78
#: every link, each direction (paper 001's single port: the master's the same)
RATE = "100mbit"
#: float64s of a gradient: 8 l bytes at 100 Mbit/s take tc = 0.05 s
FEATURES = 78125
#: paper 001, Section IV-B: seconds a sample, and the exponential rate (a mu = 1)
A, MU = 5e-5, 2e4
#: the MPI runtime's header on every result (8 H bytes, gradcode.train.protocol)
HEADER_BYTES = 96
#: worker-trials simulated per cluster size at most: ``trials`` is cut to this over N
TRIAL_BUDGET = 10_000_000
#: the largest cluster whose GC code is built (module docstring)
GC_MAX_WORKERS = 1000
GC_NOT_RUN = (
    "not run: building the cyclic code solves one S x S system per worker, O(N S^3) with "
    "S = N/4 (5.3 s of CPU for N = 1,000, 45 s for 2,000; hours for 10,000), and its N x N "
    "encoding matrix alone is 8 N^2 bytes"
)


@dataclass(frozen=True)
class TreeShape:
    """An ``(n, L)``-regular tree with ``s`` stragglers tolerated per parent."""

    n: int
    L: int
    s: int

    @property
    def workers(self) -> int:
        """``n + n^2 + ... + n^L``."""
        return tree_size(self.n, self.L)

    @property
    def load(self) -> Fraction:
        """Theorem 1's ``r_CR``: the fraction of the data set every node computes on."""
        return r_cr(self.n, self.L, self.s)

    def params(self) -> dict[str, Any]:
        """The ``coded-reduce`` parameters (the cyclic code at every parent, as the paper)."""
        return {"n": self.n, "L": self.L, "s": self.s, "inner": "crc"}

    def describe(self) -> str:
        return f"({self.n}, {self.L}), s = {self.s}"


def regular_trees(max_workers: int) -> Iterator[tuple[int, int]]:
    """Every ``(n, L)`` with ``n >= 2``, ``L >= 2`` and at most ``max_workers`` workers."""
    depth = 2
    while tree_size(2, depth) <= max_workers:
        branching = 2
        while tree_size(branching, depth) <= max_workers:
            yield branching, depth
            branching += 1
        depth += 1


def stragglers_per_parent(n: int, alpha: Fraction = ALPHA) -> int:
    """``round(n alpha)`` (halves up), at least 1 and below ``n``."""
    return min(n - 1, max(1, int(n * alpha + Fraction(1, 2))))


def trees_by_depth(workers: int) -> list[TreeShape]:
    """For every depth ``L >= 2``, the regular tree of that depth with the most workers that
    fit, if it has at least half of them: the other shapes CR could take (``s`` as in
    ``paper_tree``)."""
    best: dict[int, tuple[int, int]] = {}
    for n, L in regular_trees(workers):
        if 2 * tree_size(n, L) >= workers:
            best[L] = max(best.get(L, (n, L)), (n, L))
    return [
        TreeShape(n, L, stragglers_per_parent(n))
        for n, L in sorted(best.values(), key=lambda t: t[1])
    ]


def paper_tree(workers: int, alpha: Fraction = ALPHA) -> TreeShape:
    """CR's tree for a cluster of ``workers`` (module docstring): the regular tree of two or
    more layers with the most workers that fit, the deeper on a tie; ``UserError`` below 6."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < tree_size(2, 2):
        raise UserError(
            f"paper_tree: needs an integer number of workers >= {tree_size(2, 2)} "
            f"(the smallest (n, L)-regular tree of two layers; got {workers!r})"
        )
    n, L = max(regular_trees(workers), key=lambda shape: (tree_size(*shape), shape[1]))
    return TreeShape(n, L, stragglers_per_parent(n, alpha))


def model_parameters(workers: int, latency: float = 0.0) -> dict[str, Any]:
    """The ``shared-links`` parameters of a cluster of ``workers`` (module docstring)."""
    return {
        "rate": RATE,
        "latency": latency,
        "features": FEATURES,
        "header_bytes": HEADER_BYTES,
        "download": True,
        "distribution": "isend",
        "a": A,
        "mu": MU,
        "data": SAMPLES_PER_WORKER * workers,
    }


def not_run(workers: int) -> dict[str, str]:
    """Label -> why that scheme is not simulated at ``workers``."""
    return {"GC": GC_NOT_RUN} if workers > GC_MAX_WORKERS else {}


def schemes(workers: int, labels: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The spec's schemes at ``workers`` (those of ``not_run`` left out), only those of
    ``labels`` when given."""
    S = int(workers * ALPHA)
    tree = paper_tree(workers)
    every = [
        {"scheme": "uncoded", "label": "UMW", "params": {"n": workers}},
        {"scheme": "crc", "label": "GC", "params": {"n": workers, "s": S}},
        {"scheme": "ring-allreduce", "label": "RAR", "params": {"n": workers}},
        {"scheme": "ignore-stragglers", "label": "SGD", "params": {"n": workers, "s": S}},
        _cr(tree),
    ]
    skipped = not_run(workers)
    chosen = [entry for entry in every if entry["label"] not in skipped]
    if labels is not None:
        unknown = set(labels) - {entry["label"] for entry in every}
        if unknown:
            raise ValueError(f"scaling.schemes: unknown labels {sorted(unknown)}")
        chosen = [entry for entry in chosen if entry["label"] in labels]
    return chosen


def spec(workers: int, latency: float = 0.0, labels: Sequence[str] | None = None) -> dict[str, Any]:
    """The simulation spec (``gradcode simulate FILE`` shape) of one size and latency (only
    the schemes of ``labels`` when given)."""
    tree = paper_tree(workers)
    return {
        "name": f"coded-reduce-scaling-n{workers}",
        "description": (
            f"Paper 001's UMW, GC, RAR, SGD and CR on N = {workers} workers over 100 Mbit/s "
            f"links (tc = 0.05 s), {SAMPLES_PER_WORKER} samples a worker, alpha = 1/4; CR on "
            f"the {tree.describe()} tree ({tree.workers} workers); one-way latency "
            f"{latency * 1e3:g} ms (gradcode.analysis.scaling)."
        ),
        "source": "paper 001 (Reisizadeh et al., ToN 2021), Sections III-C and IV-B, at scale",
        "model": "shared-links",
        "parameters": model_parameters(workers, latency),
        "schemes": schemes(workers, labels),
    }


def trials_for(workers: int, trials: int) -> int:
    """``trials`` cut to ``TRIAL_BUDGET / workers`` (at least 2)."""
    return max(2, min(trials, TRIAL_BUDGET // workers))


def predict(
    workers: int,
    latencies: Sequence[float] = LATENCIES,
    *,
    trials: int,
    seed: int = 0,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """One row per scheme and latency at ``workers`` (``trials`` as given): the mean time per
    iteration, its interval, CR's speedup over the scheme (``cr_speedup``), the seconds spent
    building the codes (``build_seconds``, once) and the CPU seconds of simulating the scheme
    (``simulate_cpu_seconds``)."""
    started = time.perf_counter()
    base = load_spec(spec(workers, latencies[0]), origin=f"scaling N={workers}")
    built = time.perf_counter() - started
    tree = paper_tree(workers)
    rows: list[dict[str, Any]] = []
    for latency in latencies:
        model = model_from_spec("shared-links", model_parameters(workers, latency))
        one = dataclasses.replace(base, model=model)
        results: list[tuple[ResultRow, float]] = []
        for entry in one.schemes:
            # CPU time: the wall time of one scheme on a shared machine jumps when others run
            clock = time.process_time()
            (row,) = simulate(dataclasses.replace(one, schemes=(entry,)), trials=trials, seed=seed)
            results.append((row, time.process_time() - clock))
            if progress is not None:
                progress(
                    f"N={workers} latency={latency * 1e3:g} ms {row.label}: "
                    f"{row.mean_time:.4g} s ({results[-1][1]:.2f} s of CPU to simulate)"
                )
        cr = next(row.mean_time for row, _ in results if row.label == "CR")
        for row, seconds in results:
            rows.append(_row(workers, latency, tree, row, cr, built, seconds))
        for label, reason in not_run(workers).items():
            rows.append(
                {"workers": workers, "latency_ms": latency * 1e3, "scheme": label, "note": reason}
            )
    return rows


def predict_tree(
    workers: int,
    tree: TreeShape,
    latencies: Sequence[float] = LATENCIES,
    *,
    trials: int,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """CR alone on another ``tree`` of a cluster of ``workers`` (its data, its links): one row
    per latency, as ``predict``'s, to set other shapes beside ``paper_tree``'s."""
    if tree.workers > workers:
        raise UserError(f"predict_tree: {tree.describe()} has {tree.workers} > {workers} workers")
    data = {**spec(workers, latencies[0]), "schemes": [_cr(tree)]}
    started = time.perf_counter()
    base = load_spec(data, origin=f"scaling N={workers} tree {tree.describe()}")
    built = time.perf_counter() - started
    rows = []
    for latency in latencies:
        model = model_from_spec("shared-links", model_parameters(workers, latency))
        clock = time.process_time()
        (row,) = simulate(dataclasses.replace(base, model=model), trials=trials, seed=seed)
        seconds = time.process_time() - clock
        rows.append(_row(workers, latency, tree, row, row.mean_time, built, seconds))
    return rows


def _cr(tree: TreeShape) -> dict[str, Any]:
    return {"scheme": "coded-reduce", "label": "CR", "params": tree.params()}


def _row(
    workers: int,
    latency: float,
    tree: TreeShape,
    row: ResultRow,
    cr: float,
    built: float,
    seconds: float,
) -> dict[str, Any]:
    is_cr = row.label == "CR"
    return {
        "workers": workers,
        "latency_ms": latency * 1e3,
        "scheme": row.label,
        "used_workers": row.workers,
        "tree": tree.describe() if is_cr else "",
        "load": float(tree.load) if is_cr else None,
        "data": SAMPLES_PER_WORKER * workers,
        "trials": row.trials,
        "mean_time": row.mean_time,
        "ci_low": row.ci_low,
        "ci_high": row.ci_high,
        "cr_speedup": row.mean_time / cr,
        "build_seconds": built,
        "simulate_cpu_seconds": seconds,
    }


def compute(*, trials: int, seed: int, progress: Progress) -> Analysis:
    """Every size of ``WORKERS`` at every latency of ``LATENCIES`` (``trials_for`` each)."""
    rows: list[dict[str, Any]] = []
    for workers in WORKERS:
        found = predict(
            workers, LATENCIES, trials=trials_for(workers, trials), seed=seed, progress=progress
        )
        rows += found
    meta = {
        "source": "paper 001 (Reisizadeh et al., ToN 2021), Sections III-C and IV-B",
        "model": "shared-links",
        "parameters": {k: v for k, v in model_parameters(1).items() if k != "data"},
        "samples_per_worker": SAMPLES_PER_WORKER,
        "alpha": str(ALPHA),
        "workers": list(WORKERS),
        "latencies": list(LATENCIES),
        "trial_budget": TRIAL_BUDGET,
        "trees": {str(n): paper_tree(n).describe() for n in WORKERS},
    }
    return Analysis(rows, meta)
