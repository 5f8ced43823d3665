"""``amazon-standin``: synthetic data shaped like Amazon Employee Access. NOT THE AMAZON DATA.

Kaggle's terms do not let the project ship ``train.csv``, so where it is absent (the offline
default workflow, tests) runs use this stand-in. Its name, ``meta["stand_in"] = true`` and the
description in ``meta.json`` say what it is, so that no figure can pass it off as Amazon.

It draws a categorical table of 32,769 rows by the same 9 columns, with 30,872 rows of
``ACTION = 1`` and 1,897 of ``ACTION = 0`` (the real counts, 94.2% positive), and feeds it to
the real pipeline (:func:`gradcode.data.amazon.encode`: label codes, interaction pairs,
one-hot, bias, the same 80/20 ``train_test_split``), so the output has the real data's format,
rows (26,215 / 6,554) and 44 ones per row (``tandon``). Only the table is synthetic.

Imitated statistics, measured on the published ``train.csv`` (sha256 c50b1194...; aggregate
numbers only, no row is copied; :func:`frequencies` re-measures them and the test suite checks
them against the real file where it is available):

* each column's value frequencies (:data:`FREQUENCIES`): the number of values seen 1, 2, 3,
  4 and 5 times exactly, and the counts of the most frequent values at ranks 1, 2, 3, 5, 10,
  20, 50, ... (interpolated log-log in between). Cardinalities are those of train.csv (7,518
  RESOURCE, 4,243 MGR_ID, ... 343 ROLE_CODE); the frequencies are heavy-tailed like the real
  ones (RESOURCE: 839 rows on the top value, 3,766 values seen once; ROLE_ROLLUP_1: one value
  on 65% of the rows);
* how the columns go together, which sets the number of interaction features: in train.csv a
  manager nearly determines the rollups and department, ROLE_FAMILY_DESC nearly determines
  ROLE_TITLE, which determines ROLE_FAMILY, and ROLE_CODE is a relabelling of ROLE_TITLE.

How the table is drawn (``numpy.random.default_rng(seed)``, in this order): every row gets a
position ``z ~ U(0, 1)`` on a line (think: where in the organisation the request comes from).
The columns of :data:`LAYOUT` are laid out along that line in turn: the column's values, each
cut into pieces of at most ``piece`` rows, are put in a random order, and the rows sorted by
``z + sigma * N(0, 1)`` are given the pieces' values in that order, each piece as many rows as
it has. So each of these columns has exactly the frequencies of :data:`FREQUENCIES`, and
a column with small ``sigma`` and long pieces follows the line closely (few distinct pairs
with the other columns), while noise and short pieces scatter it. Then the columns of
:data:`DERIVED` are drawn as a function of another column (every value of the parent, or every
piece, is mapped to one child value: first the lightest parents to the rarest child values one
to one, so that every child value occurs, then the heaviest first, each to the child value
furthest below its frequency), and ROLE_CODE is a random relabelling of ROLE_TITLE. A row equal
to an earlier one swaps its RESOURCE with a row near it on the line until no row repeats
(train.csv has 32,769 distinct rows). Last, every column's values are relabelled by a random
permutation, so that codes do not follow frequency. The layout parameters were chosen by a grid
search over ``sigma`` and ``piece`` (seed 0) to match the numbers of categories of the 34
interaction blocks of train.csv.

Labels: a logistic model in the ``tandon`` features. Every category of the 9 columns gets an
effect ``N(0, EFFECT_STD["column"] ** 2)``, every category of the 34 pairs an effect
``N(0, EFFECT_STD["pair"] ** 2)``; ``eta`` of a row is the sum of its 43 effects, and the 1,897
rows with the smallest ``eta + L`` (``L`` standard logistic noise) get ``ACTION = 0``: labels are
Bernoulli with a log-odds ``eta`` plus the intercept that gives the real count of negatives.
The scales are set so that scikit-learn's ``LogisticRegression(C=1)`` (no intercept: the bias
column is one) reaches about the real data's test AUC: on train.csv 0.881 with ``tandon``
features and 0.861 with ``first-order``; here 0.872 and 0.855 with seed 0 (seeds 0-4: 0.872 to
0.901, mean 0.886; and 0.855 to 0.882, mean 0.869).

What differs (seed 0): ``tandon`` has 251,448 features against 241,915 (seeds 0-4: 251,448 to
252,031); the interaction blocks have between 0.73 and 1.5 times the real number of categories,
most within 20% (ROLE_DEPTNAME*ROLE_FAMILY_DESC has 0.73 of the real, ROLE_DEPTNAME*ROLE_FAMILY
1.5); ROLE_ROLLUP_1 and ROLE_FAMILY, drawn as functions, have their real cardinalities but
frequencies only close to the real ones (top value +2% and +6%). Which categories matter for the
label is random, not Amazon's pattern: models trained here predict nothing about Amazon, and
only the scale of the problem (rows, features, sparsity, label balance, difficulty) carries over.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.data.amazon import (
    COLUMNS,
    encode,
    encoding_recipe,
    interaction_pairs,
    one_hot_indices,
)
from gradcode.data.amazon import VARIANTS as AMAZON_VARIANTS
from gradcode.data.io import RawFile
from gradcode.data.prepared import Built

N_ROWS = 32_769
N_NEGATIVE = 1_897
#: values seen this many times or fewer are counted exactly in ``Frequencies.tail``
TAIL = 5


@dataclass(frozen=True)
class Frequencies:
    """A column's value frequencies: ``head`` (rank, rows) anchors of the values seen more than
    ``TAIL`` times, the last at the rank of the least frequent of them; ``tail[v - 1]`` the
    number of values seen exactly ``v`` times."""

    head: tuple[tuple[int, int], ...]
    tail: tuple[int, ...]

    @property
    def cardinality(self) -> int:
        return self.head[-1][0] + sum(self.tail)


#: measured on train.csv (pandas value_counts of each column, 32,769 rows); ROLE_CODE has
#: ROLE_TITLE's (it is a relabelling of it)
FREQUENCIES: dict[str, Frequencies] = {
    "RESOURCE": Frequencies(
        (
            (1, 839),
            (2, 484),
            (3, 409),
            (5, 404),
            (10, 239),
            (20, 137),
            (50, 65),
            (100, 37),
            (200, 21),
            (500, 10),
            (942, 6),
        ),
        (3766, 1394, 760, 408, 248),
    ),
    "MGR_ID": Frequencies(
        (
            (1, 152),
            (2, 99),
            (3, 82),
            (5, 67),
            (10, 62),
            (20, 57),
            (50, 46),
            (100, 37),
            (200, 27),
            (500, 17),
            (1000, 10),
            (1707, 6),
        ),
        (845, 607, 452, 365, 267),
    ),
    "ROLE_ROLLUP_1": Frequencies(
        (
            (1, 21407),
            (2, 742),
            (3, 721),
            (5, 400),
            (10, 291),
            (20, 186),
            (50, 62),
            (100, 12),
            (109, 7),
        ),
        (10, 2, 1, 3, 3),
    ),
    "ROLE_ROLLUP_2": Frequencies(
        (
            (1, 4424),
            (2, 3945),
            (3, 2641),
            (5, 1796),
            (10, 721),
            (20, 253),
            (50, 90),
            (100, 28),
            (147, 6),
        ),
        (17, 3, 4, 3, 3),
    ),
    "ROLE_DEPTNAME": Frequencies(
        (
            (1, 1135),
            (2, 763),
            (3, 659),
            (5, 597),
            (10, 501),
            (20, 304),
            (50, 162),
            (100, 98),
            (200, 42),
            (364, 6),
        ),
        (24, 24, 13, 11, 13),
    ),
    "ROLE_TITLE": Frequencies(
        (
            (1, 4649),
            (2, 3583),
            (3, 1772),
            (5, 1043),
            (10, 521),
            (20, 335),
            (50, 147),
            (100, 45),
            (200, 11),
            (253, 6),
        ),
        (32, 19, 16, 12, 11),
    ),
    "ROLE_FAMILY_DESC": Frequencies(
        (
            (1, 6896),
            (2, 1244),
            (3, 670),
            (5, 530),
            (10, 321),
            (20, 205),
            (50, 91),
            (100, 35),
            (200, 20),
            (500, 9),
            (780, 6),
        ),
        (643, 371, 252, 186, 126),
    ),
    "ROLE_FAMILY": Frequencies(
        ((1, 10980), (2, 2690), (3, 2636), (5, 1318), (10, 783), (20, 293), (50, 15), (55, 6)),
        (0, 3, 5, 2, 2),
    ),
}

#: column -> (sigma, piece) of its layout along the line (piece None: values are not cut),
#: in the order they are laid out
LAYOUT: dict[str, tuple[float, int | None]] = {
    "MGR_ID": (0.0, None),
    "ROLE_ROLLUP_2": (0.0002, 80),
    "ROLE_DEPTNAME": (0.0, 56),
    "ROLE_FAMILY_DESC": (0.000035, 80),
    "RESOURCE": (0.0015, 10),
}
#: child -> (parent, "value" or "piece"): the child is a function of the parent's value, or of
#: the parent's layout piece (a frequent ROLE_FAMILY_DESC spans several titles, as in train.csv)
DERIVED: dict[str, tuple[str, str]] = {
    "ROLE_ROLLUP_1": ("ROLE_ROLLUP_2", "value"),
    "ROLE_TITLE": ("ROLE_FAMILY_DESC", "piece"),
    "ROLE_FAMILY": ("ROLE_TITLE", "value"),
}
#: how far (in rows along the line) a repeated row may swap its RESOURCE
SWAP_REACH = 100
#: standard deviations of the label model's effects per category
EFFECT_STD = {"column": 0.8, "pair": 0.8}


def value_counts(frequencies: Frequencies, rows: int = N_ROWS) -> np.ndarray:
    """Rows per value, in decreasing order, summing to ``rows``: the tail exactly, the head
    interpolated log-log between its anchors and scaled (above ``TAIL + 1``) to the sum."""
    tail = np.repeat(np.arange(TAIL, 0, -1), frequencies.tail[::-1])
    ranks, counts = (np.array(a, dtype=np.float64) for a in zip(*frequencies.head, strict=True))
    size = int(ranks[-1])
    curve = np.exp(np.interp(np.log(np.arange(1, size + 1)), np.log(ranks), np.log(counts)))
    excess = curve - (TAIL + 1)
    scaled = excess * ((rows - tail.sum() - size * (TAIL + 1)) / excess.sum())
    head = np.floor(scaled)
    # largest remainders first; ties by rank, so the result depends on nothing random
    order = np.argsort(head - scaled, kind="stable")
    head[order[: int(rows - tail.sum() - size * (TAIL + 1) - head.sum())]] += 1
    head = np.sort(head.astype(np.int64) + TAIL + 1)[::-1]
    return np.concatenate([head, tail])


def frequencies(values: np.ndarray) -> Frequencies:
    """The :class:`Frequencies` of one column (any integer labels), as measured for
    :data:`FREQUENCIES`."""
    counts = np.sort(np.unique(values, return_counts=True)[1])[::-1]
    tail = tuple(int(np.count_nonzero(counts == v)) for v in range(1, TAIL + 1))
    size = int(np.count_nonzero(counts > TAIL))
    ranks = [r for r in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if r < size]
    head = tuple((r, int(counts[r - 1])) for r in [*ranks, size])
    return Frequencies(head, tail)


def _lay_out(
    rng: np.random.Generator,
    position: np.ndarray,
    counts: np.ndarray,
    sigma: float,
    piece: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Values (indices into ``counts``) and piece numbers of the rows, see the module doc."""
    pieces = np.ones_like(counts) if piece is None else -(-counts // piece)
    owner = np.repeat(np.arange(counts.size), pieces)
    first = np.repeat(np.cumsum(pieces) - pieces, pieces)
    index = np.arange(owner.size) - first
    # pieces of one value differ in size by at most one row
    size = counts[owner] // pieces[owner] + (index < counts[owner] % pieces[owner])
    shuffled = rng.permutation(owner.size)
    noisy = position + sigma * rng.standard_normal(position.size)
    order = np.argsort(noisy, kind="stable")
    values = np.empty(position.size, dtype=np.int64)
    piece_of = np.empty(position.size, dtype=np.int64)
    values[order] = np.repeat(owner[shuffled], size[shuffled])
    piece_of[order] = np.repeat(shuffled, size[shuffled])
    return values, piece_of


def _function(rng: np.random.Generator, mass: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A map from ``mass.size`` parents (rows each) to ``counts.size`` children, each child
    hit, the children's rows close to ``counts``: see the module doc."""
    ascending = np.lexsort((rng.permutation(mass.size), mass))
    cover = ascending[: counts.size]
    rarest = np.argsort(counts, kind="stable")
    child = np.empty(mass.size, dtype=np.int64)
    child[cover] = rarest
    deficit = counts.astype(np.int64)
    np.subtract.at(deficit, rarest, mass[cover])
    heap = [(-int(d), j) for j, d in enumerate(deficit)]
    heapq.heapify(heap)
    for parent in ascending[counts.size :][::-1]:
        negative_deficit, j = heapq.heappop(heap)
        child[parent] = j
        heapq.heappush(heap, (negative_deficit + int(mass[parent]), j))
    return child


def draw_table(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(action (N_ROWS,) in {0, 1}, categories (N_ROWS, 9) int64 in COLUMNS order)``."""
    rng = np.random.default_rng(seed)
    categories = _categories(rng)
    return _labels(rng, categories), categories


def _categories(rng: np.random.Generator) -> np.ndarray:
    position = rng.random(N_ROWS)
    values: dict[str, np.ndarray] = {}
    pieces: dict[str, np.ndarray] = {}
    for column, (sigma, piece) in LAYOUT.items():
        counts = value_counts(FREQUENCIES[column])
        values[column], pieces[column] = _lay_out(rng, position, counts, sigma, piece)
    for column, (parent, by) in DERIVED.items():
        source = values[parent] if by == "value" else pieces[parent]
        mass = np.bincount(source)
        values[column] = _function(rng, mass, value_counts(FREQUENCIES[column]))[source]
    values["ROLE_CODE"] = values["ROLE_TITLE"]
    table = np.column_stack([values[c] for c in COLUMNS])
    _make_rows_distinct(rng, table, COLUMNS.index("RESOURCE"), position)
    return np.column_stack([rng.permutation(int(column.max()) + 1)[column] for column in table.T])


def _make_rows_distinct(
    rng: np.random.Generator, table: np.ndarray, column: int, position: np.ndarray
) -> None:
    """Swap ``column`` between each repeated row and a row near it on the line (at most
    ``SWAP_REACH`` rows away) until no row repeats (train.csv has none); the column's
    frequencies are unchanged and its values stay near where they were laid out."""
    line = np.argsort(position, kind="stable")
    rank = np.empty_like(line)
    rank[line] = np.arange(line.size)
    # only ``column`` changes: a row is (its group of the other columns, its value)
    _, group = np.unique(np.delete(table, column, axis=1), axis=0, return_inverse=True)
    group = group.reshape(-1) * (int(table[:, column].max()) + 1)
    for _ in range(100):
        _, first = np.unique(group + table[:, column], return_index=True)
        repeated = np.ones(table.shape[0], dtype=bool)
        repeated[first] = False
        repeated = np.flatnonzero(repeated)
        if repeated.size == 0:
            return
        step = rng.integers(1, SWAP_REACH + 1, size=repeated.size)
        step *= rng.choice(np.array([-1, 1]), size=repeated.size)
        partners = line[np.clip(rank[repeated] + step, 0, line.size - 1)]
        for row, partner in zip(repeated, partners, strict=True):
            table[[row, partner], column] = table[[partner, row], column]
    raise RuntimeError("amazon-standin: repeated rows remain after 100 rounds of swaps")


def _labels(rng: np.random.Generator, categories: np.ndarray) -> np.ndarray:
    indices, blocks = one_hot_indices(categories, interaction_pairs("tandon"))
    scale = np.concatenate(
        [
            np.full(b["size"], EFFECT_STD["pair" if "*" in b["name"] else "column"])
            for b in blocks[:-1]
        ]
    )
    effects = scale * rng.standard_normal(scale.size)
    eta = effects[indices[:, :-1]].sum(axis=1)
    score = eta + rng.logistic(size=eta.size)
    action = np.ones(eta.size, dtype=np.int64)
    action[np.argsort(score, kind="stable")[:N_NEGATIVE]] = 0
    return action


def build(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Draw the table with ``seed`` and encode it with the amazon recipe ``variant``
    (``seed`` is also the split's random_state)."""
    assert seed is not None  # the registry gives a default
    action, categories = draw_table(seed)
    pairs = interaction_pairs(AMAZON_VARIANTS[variant].pairs)
    encoded = encode(action, categories, pairs=pairs, seed=seed)
    features = encoded.X_train.shape[1]
    return Built(
        X_train=encoded.X_train,
        y_train=encoded.y_train,
        X_test=encoded.X_test,
        y_test=encoded.y_test,
        train_rows=encoded.train_rows,
        test_rows=encoded.test_rows,
        stand_in=True,
        description=(
            "STAND-IN, NOT THE AMAZON DATA: a synthetic categorical table with Amazon Employee "
            f"Access's shape ({N_ROWS:,} rows x 9 columns, train.csv's value frequencies, "
            f"{N_ROWS - N_NEGATIVE:,} positives) and labels from a random logistic model, "
            f"encoded by the amazon recipe {variant} ({features:,} features), for tests and "
            "offline runs only"
        ),
        row_index="0-based row of the synthetic table, in order of generation",
        recipe={
            **encoding_recipe(
                pairs,
                encoded,
                seed,
                "all rows of the synthetic table (train and test split together)",
            ),
            "imitates": f"amazon {variant}",
            "generator": "numpy.random.default_rng(seed); see gradcode.data.amazon_standin",
            "rows": N_ROWS,
            "negatives": N_NEGATIVE,
            "frequencies": {
                c: {"head": [list(a) for a in f.head], "tail": list(f.tail)}
                for c, f in FREQUENCIES.items()
            },
            "frequencies_source": "measured on train.csv (sha256 c50b1194...), aggregates only",
            "layout": {c: {"sigma": s, "piece": p} for c, (s, p) in LAYOUT.items()},
            "derived": {
                **{c: {"parent": p, "of": by} for c, (p, by) in DERIVED.items()},
                "ROLE_CODE": {"parent": "ROLE_TITLE", "of": "value (a relabelling)"},
            },
            "label_model": {
                "log_odds": "sum of the row's effects of the tandon features, plus intercept",
                "effect_std": dict(EFFECT_STD),
                "negatives": f"the {N_NEGATIVE} rows with the smallest log-odds + logistic noise",
            },
        },
        notes=[
            "Synthetic stand-in: never report results on it as Amazon results.",
            f"{features:,} features here; the real train.csv gives "
            f"{AMAZON_VARIANTS[variant].features_on_train_csv:,} with this recipe.",
        ],
    )
