"""The distortion fraction of an aggregable code under an omniscient attacker (ByzShield's
metric, Konstantinidis & Ramamoorthy, MLSys 2021).

An aggregable code (``Capabilities.aggregable``) hands a robust aggregator
``aggregation_count()`` values, of which the workers ``liars`` can corrupt
``aggregation_corrupted(liars)``: ByzShield's and DETOX's votes held by a majority of liars,
the baseline's (``uncoded``) own gradients of the liars. An omniscient attacker that knows the
placement picks the ``q`` workers corrupting the most values; that most is ``c_max^(q)`` and
``c_max^(q) / aggregation_count()`` the *distortion fraction* ``epsilon``. It is computed here
exactly, by trying every ``q``-subset of the ``n`` workers (refused in one line beyond
``limit`` subsets), for any aggregable code, so ByzShield's, DETOX's and the baseline's come
from the same function and are comparable.

``worst_distortions`` finds the same maximum for every ``q <= q_max`` at once, fast enough for
ByzShield's tables (``K = 35``, ``q = 13``: ``C(35, 13) = 1.5e9`` placements), for a code that
describes its votes (``votes()``, a ``Votes``: which workers hold each value, the *parallel
classes* of workers, every value having exactly one holder in each class, so a class's workers
hold disjoint values, and the ``quorum`` of lying holders that corrupts a value: ByzShield's
placements, DETOX's groups). Three exact reductions, no heuristic:

- the last class is never enumerated: once the liars of the other classes are fixed, each of its
  workers distorts, on its own, the files of its own that already have ``quorum - 1`` liars,
  and its workers' files are disjoint, so its best ``b`` liars are the ``b`` largest such gains;
- the two classes before it are enumerated as one array (every pair of their subsets, each a
  row of per-file liar counts) and the rest, the first class included, in a loop;
- the first class's subsets are taken up to rotation when rotating every class by one worker
  (the placements' cyclic shift) maps the placement onto itself, and the second class's too
  when rotating class ``i`` by ``i`` workers also does (ByzShield's three placements: the
  affine shifts of their grids); both are checked, not assumed: a set of liars and its image
  under an automorphism distort equally many files.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradcode.codes.base import GradientCode, check_int, require

#: most ``q``-subsets ``worst_distortion`` tries by default (about 10 s of Python calls)
MAX_PLACEMENTS = 1_000_000


@dataclass(frozen=True)
class Votes:
    """How an aggregable code's values are voted: ``holders`` (0/1, workers x values: the
    workers whose copies vote the value), ``classes`` (the parallel classes: a partition of the
    workers with one holder of every value in each) and ``quorum`` (lying holders that make a
    value's vote theirs)."""

    holders: np.ndarray
    classes: tuple[tuple[int, ...], ...]
    quorum: int


@dataclass(frozen=True)
class Distortion:
    """The worst placement of ``liars`` workers for one code.

    ``distorted``: ``c_max^(q)``, the most values those workers corrupt; ``values``: how many
    values the aggregator takes (``aggregation_count()``); ``worst``: a placement attaining it
    (``worst_distortion``: the first in lexicographic order); ``placements``: how many
    placements the maximum is over (every one, ``C(n, q)``).
    """

    liars: int
    distorted: int
    values: int
    worst: tuple[int, ...]
    placements: int

    @property
    def fraction(self) -> float:
        """The distortion fraction ``c_max^(q) / f``."""
        return self.distorted / self.values


def worst_distortion(code: GradientCode, liars: int, *, limit: int = MAX_PLACEMENTS) -> Distortion:
    """``c_max^(q)`` of ``code`` for ``q = liars``, over every placement of the liars."""
    q = check_int("liars", code.name, liars)
    require(
        code.capabilities.aggregable,
        f"distortion: {code.name} is not aggregable (it hands an aggregator no values)",
    )
    require(q <= code.n, f"distortion: {code.name} has n={code.n} workers (got q={q} liars)")
    total = math.comb(code.n, q)
    require(
        total <= limit,
        f"distortion: {total} placements of q={q} liars among n={code.n} exceed the limit {limit}",
    )
    best, worst = -1, ()
    for placement in itertools.combinations(range(code.n), q):
        corrupted = code.aggregation_corrupted(placement)
        if corrupted > best:
            best, worst = corrupted, placement
    return Distortion(q, best, code.aggregation_count(), worst, total)


def worst_distortions(code: GradientCode, q_max: int) -> tuple[Distortion, ...]:
    """``c_max^(q)`` of ``code`` for ``q = 0 .. q_max`` (module docstring), for a code with
    ``votes()``; each worst placement found is checked with ``code.aggregation_corrupted``."""
    q_max = check_int("liars", code.name, q_max)
    require(q_max <= code.n, f"distortion: {code.name} has n={code.n} workers (got q={q_max})")
    describe = getattr(code, "votes", None)
    require(
        describe is not None,
        f"distortion: {code.name} does not describe its votes (use worst_distortion)",
    )
    votes: Votes = describe()
    found = class_search(votes.holders, votes.classes, votes.quorum, q_max)
    results = []
    for q, (distorted, worst) in enumerate(found):
        if code.aggregation_corrupted(worst) != distorted:  # a broken search, never an input
            raise RuntimeError(f"distortion: search and {code.name} disagree at q={q}")
        results.append(
            Distortion(q, distorted, code.aggregation_count(), worst, math.comb(code.n, q))
        )
    return tuple(results)


def class_search(
    holds: np.ndarray, classes: Sequence[Sequence[int]], quorum: int, q_max: int
) -> list[tuple[int, tuple[int, ...]]]:
    """For ``q = 0 .. q_max``: the most files (columns of the 0/1 ``holds``, workers x files)
    with at least ``quorum`` of ``q`` chosen workers among their holders, and a choice
    attaining it; ``classes`` partition the workers, each file having one holder per class."""
    holds = np.asarray(holds, dtype=bool)
    files = holds.shape[1]
    member = [holds[list(c)] for c in classes]
    require(
        all((block.sum(axis=0) == 1).all() for block in member),
        "distortion: every file needs exactly one holder in each parallel class",
    )
    # holder[c][p]: the position, in class c, of file p's holder
    holder = [block.argmax(axis=0) for block in member]

    def subsets(c: int) -> tuple[np.ndarray, np.ndarray]:
        """Per subset (bit t: the class's t-th worker) of class c: the files it holds, its size."""
        masks = np.arange(1 << len(classes[c]))
        return ((masks[:, None] >> holder[c][None, :]) & 1).astype(np.int8), _popcount(masks)

    *looped, last = range(len(classes))
    block = looped[max(1, len(looped) - 2) :]
    looped = looped[: max(1, len(looped) - 2)]
    # the block: every combination of its classes' subsets, one row each
    counts, sizes = np.zeros((1, files), dtype=np.int8), np.zeros(1, dtype=np.int64)
    for c in block:
        held, size = subsets(c)
        counts = (counts[:, None, :] + held[None, :, :]).reshape(-1, files)
        sizes = (sizes[:, None] + size[None, :]).reshape(-1)
    order = np.argsort(sizes, kind="stable")
    counts, sizes = counts[order], sizes[order]
    starts = np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]])
    width = len(classes[last])
    # the block's files ordered by their holder in the last class, so that a last-class
    # worker's gain is a sum over consecutive columns
    by_holder = np.argsort(holder[last], kind="stable")
    counts = np.ascontiguousarray(counts[:, by_holder])
    holder_bounds = np.searchsorted(holder[last][by_holder], np.arange(width + 1))

    # liars in the block's size groups and the last class: (groups) x (b = 0 .. width)
    group_liars = sizes[starts][:, None] + np.arange(width + 1)[None, :]
    best = np.full(q_max + 1, -1, dtype=np.int64)
    where: list[tuple[tuple[int, ...], int, int]] = [((), 0, 0)] * (q_max + 1)
    for prefix in _looped_choices(holds, classes, looped, subsets):
        chosen, base_counts = prefix
        size = len(chosen)
        if size > q_max:
            continue
        fits = int(np.searchsorted(sizes, q_max - size, side="right"))  # rows within q_max
        total = counts[:fits] + base_counts[by_holder]
        value = _with_last_class(total, quorum, holder_bounds)
        groups = int(np.searchsorted(starts, fits))
        top = np.maximum.reduceat(value, starts[:groups], axis=0)  # (sizes) x (b = 0 .. width)
        liars = size + group_liars[:groups]
        better = (liars <= q_max) & (top > best[np.minimum(liars, q_max)])
        for group, b in zip(*np.nonzero(better), strict=True):
            q = int(liars[group, b])
            if top[group, b] > best[q]:
                best[q] = top[group, b]
                stop = starts[group + 1] if group + 1 < groups else fits
                row = starts[group] + int(np.argmax(value[starts[group] : stop, b]))
                where[q] = (chosen, row, int(b))
    return [
        (int(best[q]), _placement(holds, classes, quorum, block, chosen, order[row], b))
        for q, (chosen, row, b) in enumerate(where)
    ]


def _with_last_class(total: np.ndarray, quorum: int, bounds: np.ndarray) -> np.ndarray:
    """Per row of liar counts (files ordered by their last-class holder, whose ``t``-th worker
    holds columns ``bounds[t] .. bounds[t + 1]``): the files distorted with ``b = 0 .. width``
    last-class liars, the ``b`` of largest gain."""
    rows, width = len(total), len(bounds) - 1
    distorted = np.count_nonzero(total >= quorum, axis=1)
    near = total == quorum - 1
    loads = np.diff(bounds)
    if loads[0] > 0 and (loads == loads[0]).all():  # equal loads: a reshape sums them
        gains = near.reshape(rows, width, int(loads[0])).sum(axis=2, dtype=np.int32)
    else:
        running = np.zeros((rows, near.shape[1] + 1), dtype=np.int32)
        np.cumsum(near, axis=1, out=running[:, 1:])
        gains = running[:, bounds[1:]] - running[:, bounds[:-1]]
    value = np.empty((rows, width + 1), dtype=np.int64)
    value[:, 0] = distorted
    np.cumsum(np.sort(gains, axis=1)[:, ::-1], axis=1, out=value[:, 1:])
    value[:, 1:] += distorted[:, None]
    return value


def _placement(holds, classes, quorum, block, chosen, index, b) -> tuple[int, ...]:
    """The workers of one found maximum: the looped choice, block row ``index``, and the
    ``b`` last-class workers of largest gain (as ``_with_last_class`` ranked them)."""
    workers = list(chosen) + _block_workers(classes, block, index)
    near = holds[workers].sum(axis=0) == quorum - 1
    gains = (near[None, :] & holds[list(classes[-1])]).sum(axis=1)
    workers += [classes[-1][t] for t in np.argsort(-gains, kind="stable")[:b]]
    return tuple(sorted(int(w) for w in workers))


def _popcount(masks: np.ndarray) -> np.ndarray:
    return np.array([bin(int(m)).count("1") for m in masks], dtype=np.int64)


def _looped_choices(holds, classes, looped, subsets):
    """Every choice of liars in the looped classes, the first (and second) up to rotation where
    rotations are automorphisms (``_rotations``), with its per-file liar counts."""
    if not looped:  # a single class: the last one does everything
        yield (), np.zeros(holds.shape[1], dtype=np.int8)
        return
    options = [list(range(1 << len(classes[c]))) for c in looped]
    for c in range(min(_rotations(holds, classes), len(looped))):
        options[c] = [m for m in options[c] if m == _least_rotation(m, len(classes[looped[c]]))]
    for picks in itertools.product(*options):
        chosen = [classes[c][t] for c, mask in zip(looped, picks, strict=True) for t in _bits(mask)]
        yield tuple(chosen), holds[chosen].sum(axis=0).astype(np.int8)


def _least_rotation(mask: int, width: int) -> int:
    full = (1 << width) - 1
    return min(((mask << t) | (mask >> (width - t))) & full for t in range(width))


def _rotations(holds: np.ndarray, classes: Sequence[Sequence[int]]) -> int:
    """How many leading classes can each be rotated to any position independently: 1 when
    rotating every class by one worker maps the placement onto itself, 2 when moreover
    rotating class ``i`` by ``i`` workers does (their powers then turn class 0 by ``w`` and
    class 1 by ``w + u``, any two amounts: the affine shifts of ByzShield's placements)."""
    if not _is_automorphism(holds, classes, [1] * len(classes)):
        return 0
    return 2 if _is_automorphism(holds, classes, list(range(len(classes)))) else 1


def _bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


def _block_workers(classes, block, index: int) -> list[int]:
    """The workers of block row ``index`` (before sorting): mixed radix over the block's
    classes, the last class fastest."""
    workers = []
    for c in reversed(block):
        index, mask = divmod(int(index), 1 << len(classes[c]))
        workers += [classes[c][t] for t in _bits(mask)]
    return workers


def _is_automorphism(
    holds: np.ndarray, classes: Sequence[Sequence[int]], steps: Sequence[int]
) -> bool:
    """Whether moving class ``i``'s ``t``-th worker to its ``t + steps[i]``-th (cyclically)
    maps the files' sets of holders onto themselves (each as often as before)."""
    image = {}
    for c, step in zip(classes, steps, strict=True):
        for t, w in enumerate(c):
            image[w] = c[(t + step) % len(c)]
    # as multisets: files with the same holders count as often as there are such files
    files = sorted(tuple(np.flatnonzero(column).tolist()) for column in holds.T)
    return sorted(tuple(sorted(image[w] for w in f)) for f in files) == files
