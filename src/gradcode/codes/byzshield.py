"""ByzShield: files on workers by Latin squares, a vote per file, an aggregator over the votes.

Konstantinidis & Ramamoorthy, "ByzShield: An Efficient and Robust System for Distributed
Training", MLSys 2021: files placed on workers by mutually orthogonal Latin squares (MOLS), a
majority vote per file over its ``r`` copies, then a robust aggregator over the ``f`` votes.

Placement (``placement``, default ``mols``). ``l`` prime, ``r`` odd with ``1 <= r <= l - 1``.
The data set is cut into ``f = l^2`` files (partitions), file ``p = i l + j`` being cell ``(i,
j)`` of an ``l x l`` grid. Latin square ``c = 1 .. r`` is ``L_c(i, j) = c i + j (mod l)``; for
``l`` prime the ``l - 1`` squares ``c = 1 .. l - 1`` are mutually orthogonal. Square ``c`` gives
``l`` workers, worker ``(c - 1) l + v`` holding the ``l`` cells where ``L_c`` equals ``v``: ``K
= r l`` workers of load ``l`` each, every file on ``r`` workers, one per square. Two workers of
one square hold disjoint files; two of different squares exactly one common file
(orthogonality: ``c i + j = v``, ``c' i + j = v'`` has one solution ``(i, j)`` when ``c !=
c'``), which is what keeps an omniscient attacker from concentrating its liars on few files.
Only prime ``l`` is built (prime powers would need the field ``GF(p^k)``; refused in one line).

The paper's Ramanujan bigraphs (Sec. 4.2.1, after Burnwal et al. 2020) are the other two
placements. With a prime ``s``, ``m >= 2`` and the cyclic shift ``P`` (``P[a, b] = 1`` iff ``b =
a - 1 (mod s)``), ``B`` is the ``s x m`` block matrix of ``s x s`` blocks ``P^(I J)``: row ``(I,
a)`` meets column ``(J, b)`` iff ``b = a - I J (mod s)``. ``ramanujan-1`` (the paper's Case 1,
``m < s``): ``H = B^T``, the ``m s`` columns are workers, the ``s^2`` rows files, so ``l = s``
(prime) and ``r = m`` (odd, ``3 <= r <= l - 1``): the MOLS case's ``K = r l``, ``f = l^2``.
``ramanujan-2`` (Case 2, ``m >= s``, ``s | m``): ``H = B``, the ``s^2`` rows are workers, the ``m
s`` columns files, so ``r = s`` (an odd prime) and ``l = m`` (a multiple of ``r``): ``K =
r^2``, ``f = r l``. In all three every file has one holder in each of ``r`` *parallel classes*
(squares; block columns; block rows) of ``K / r`` workers, consecutive in the numbering, whose
workers hold disjoint files (``parallel_classes``); no straggler is tolerated (``s = 0``).

Messages. Worker ``w`` sends each of its files' partial gradient as its own message, keys
``(w, j)``, ``j = 0 .. l - 1`` in computing order (message ``j`` needs the first ``j + 1``
partials), so the master holds ``r`` copies of every file.

The vote. A value sent by ``r' = (r + 1) / 2`` of a file's copies (agreeing within
``agreement_tol`` of the larger norm: the vote of DRACO's and DETOX's, ``gradcode.codes.votes``) is
the file's vote. With fewer than ``r'`` liars among a file's holders the vote is the file's
true partial gradient; with at most ``a = (r - 1) / 2`` liars anywhere that holds for every
file, so ``decode_result`` returns the exact gradient (the sum of the votes) and names the
outvoted messages: the code declares ``corrects_adversaries`` with ``a = (r - 1) / 2``. A
copy holding a NaN or an infinity agrees with none, so it is outvoted and named; more than
``a`` workers sending such copies are refused at once.
Beyond ``a`` liars it detects a file with no majority value and more than ``a`` workers
outvoted in all (``NotDecodableError``, ``needed=None``); it cannot detect ``r'`` liars
agreeing on one value in a file (they outvote its honest holders, who are named instead).

Beyond ``a`` liars: the aggregator. ``aggregation_inputs`` hands a robust aggregator one vote
per file with a majority (``total = f``); a vote can be the liars' only where ``r'`` of the
file's holders lie (``aggregation_corrupted``), the paper's *distorted* files. The worst
number of distorted files over every placement of ``q`` liars, ``c_max^(q)``, and the
*distortion fraction* ``c_max^(q) / f`` are computed by ``gradcode.codes.distortion`` (for
any aggregable code, so DETOX's and the baseline's come from the same function; for every
``q`` at once, over the parallel classes, by ``worst_distortions``);
``distortion_bound`` is the paper's spectral upper bound on ``c_max^(q)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import (
    AggregationInputs,
    DecodeResult,
    MessageKey,
    NotDecodableError,
    check_int,
    require,
)
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule
from gradcode.codes.distortion import Votes
from gradcode.codes.liars import EveryLiarPatterns
from gradcode.codes.linear import LinearCode
from gradcode.codes.votes import Voting, by_unit


def is_prime(value: int) -> bool:
    """Whether ``value`` is a prime number."""
    if value < 2:
        return False
    return all(value % d for d in range(2, math.isqrt(value) + 1))


#: the placements ``ByzShield`` builds (module docstring)
PLACEMENTS = ("mols", "ramanujan-1", "ramanujan-2")


def mols_placement(l: int, r: int) -> tuple[tuple[int, ...], ...]:
    """Worker ``w``'s files for ``r`` of the ``l - 1`` MOLS of prime order ``l`` (module
    docstring): worker ``(c - 1) l + v`` holds ``i l + j`` where ``c i + j = v (mod l)``, in
    increasing ``i``."""
    return tuple(
        tuple(i * l + (v - c * i) % l for i in range(l)) for c in range(1, r + 1) for v in range(l)
    )


def ramanujan_placement(m: int, s: int, case: int) -> tuple[tuple[int, ...], ...]:
    """Worker ``w``'s files (increasing) for the Ramanujan bigraph ``B`` of prime ``s`` and
    ``m`` block columns (module docstring): ``case`` 1 makes ``B``'s columns ``(J, b)`` the
    workers (``J s + b``) and its rows ``(I, a)`` the files (``I s + a``), case 2 the reverse."""
    rows = [(i, a) for i in range(s) for a in range(s)]
    columns = [(j, b) for j in range(m) for b in range(s)]
    if case == 1:  # worker (J, b) holds the rows (I, b + I J)
        return tuple(tuple(sorted(i * s + (b + i * j) % s for i in range(s))) for j, b in columns)
    # worker (I, a) holds the columns (J, a - I J)
    return tuple(tuple(sorted(j * s + (a - i * j) % s for j in range(m))) for i, a in rows)


class ByzShield(EveryLiarPatterns, Voting, LinearCode):
    """ByzShield: ``f`` files on ``r`` workers each, a majority vote per file (exact with up
    to ``a = (r - 1) / 2`` liars), an aggregator over the ``f`` votes beyond that.

    Parameters: ``l`` (each worker's number of files), ``r`` odd (copies of each file) and
    ``placement``: ``mols`` (``l`` prime, ``1 <= r <= l - 1``; ``K = r l``, ``f = l^2``),
    ``ramanujan-1`` (``l`` prime, ``3 <= r <= l - 1``; ``K = r l``, ``f = l^2``) or
    ``ramanujan-2`` (``r`` prime, ``l`` a multiple of ``r``; ``K = r^2``, ``f = r l``).
    """

    name = "byzshield"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True, aggregable=True)
    numerically_sound_up_to = None  # only additions and comparisons
    vote_unit = "file"

    def __init__(self, l: int = 5, r: int = 3, placement: str = "mols") -> None:
        self.l = check_int("l", self.name, l, minimum=2)
        self.r = check_int("r", self.name, r, minimum=1)
        require(
            placement in PLACEMENTS,
            f"{self.name} needs placement in {', '.join(PLACEMENTS)} (got {placement!r})",
        )
        self.placement = placement
        require(self.r % 2 == 1, f"{self.name} needs an odd r (got r={self.r})")
        if placement == "ramanujan-2":
            require(
                is_prime(self.r) and self.l % self.r == 0,
                f"{self.name} ramanujan-2 needs a prime r dividing l (got l={self.l}, r={self.r})",
            )
            self._files = ramanujan_placement(self.l, self.r, 2)
        else:
            require(
                is_prime(self.l),
                f"{self.name} needs a prime l (got l={self.l}; prime powers are not supported)",
            )
            require(
                self.r <= self.l - 1,
                f"{self.name} needs r <= l - 1 orthogonal squares (got l={self.l}, r={self.r})",
            )
            if placement == "ramanujan-1":
                require(self.r >= 3, f"{self.name} ramanujan-1 needs r >= 3 (got r={self.r})")
                self._files = ramanujan_placement(self.r, self.l, 1)
            else:
                self._files = mols_placement(self.l, self.r)
        self.n = len(self._files)
        self.k = self.n * self.l // self.r
        self.s, self.m = 0, 1
        self.a = (self.r - 1) // 2
        self._keys = tuple((w, j) for w in range(self.n) for j in range(self.l))
        self._file_of = {(w, j): self._files[w][j] for w, j in self._keys}
        # one pass over the keys, not one per file (quadratic: 4 s of a 60 s profile at n <= 50)
        copies: list[list[MessageKey]] = [[] for _ in range(self.k)]
        for key in self._keys:
            copies[self._file_of[key]].append(key)
        self._copies: tuple[tuple[MessageKey, ...], ...] = tuple(map(tuple, copies))
        #: (n, k) 0/1: worker w holds file p
        self._holds = np.zeros((self.n, self.k), dtype=np.int64)
        for w, files in enumerate(self._files):
            self._holds[w, list(files)] = 1
        encoding = np.zeros((len(self._keys), self.k, 1))
        encoding[np.arange(len(self._keys)), [self._file_of[key] for key in self._keys], 0] = 1
        self._init_linear(encoding)

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every prime ``l`` and odd ``r <= l - 1`` with ``r l <= max_n``."""
        for l in range(2, max_n + 1):
            if is_prime(l):
                for r in range(1, l, 2):
                    if r * l <= max_n:
                        yield {"l": l, "r": r}

    def params(self) -> dict[str, int | str]:
        extra = {} if self.placement == "mols" else {"placement": self.placement}
        return {"l": self.l, "r": self.r} | extra

    # -- assignment and messages ----------------------------------------------------------
    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._files[worker]

    def message_keys(self, worker: int) -> tuple[MessageKey, ...]:
        return tuple((worker, j) for j in range(self.l))

    def all_message_keys(self) -> tuple[MessageKey, ...]:
        return self._keys

    def message_prefix(self, key: MessageKey) -> int:
        self._file(key)
        return key[1] + 1  # type: ignore[index]

    def file_holders(self, file: int) -> tuple[int, ...]:
        """The ``r`` workers holding ``file``, one per parallel class."""
        return tuple(int(w) for w in np.flatnonzero(self._holds[:, file]))

    def parallel_classes(self) -> tuple[tuple[int, ...], ...]:
        """The ``r`` classes of ``K / r`` consecutive workers that hold disjoint files, every
        file on one worker of each (squares; the bigraph's block columns or block rows)."""
        size = self.n // self.r
        return tuple(tuple(range(c * size, (c + 1) * size)) for c in range(self.r))

    def _file(self, key: MessageKey) -> int:
        found = self._file_of.get(key) if isinstance(key, tuple) else None
        if found is None:
            raise ValueError(f"{self.name}: unknown message key {key!r}")
        return found

    # -- decodability ---------------------------------------------------------------------
    def _units(self, keys: Iterable[MessageKey]) -> list[list[MessageKey]]:
        """The copies among ``keys`` per file."""
        return by_unit(keys, self._file, self.k)

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """All ``r = 2a + 1`` copies of every file (no stragglers)."""
        return all(len(copies) == self.r for copies in self._units(keys))

    def completion_rule(self) -> CompletionRule:
        """Every copy of every file."""
        return CompletionRule(self._copies, (self.r,) * self.k)

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """The last message's arrival (every copy is needed)."""
        return self._arrivals(arrivals).max(axis=1)

    # -- the vote (``gradcode.codes.votes``) -----------------------------------------------
    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """The sum of the files' votes; ``adversaries``: the messages outvoted in their file."""
        copies = self._units(messages)
        missing = [key for p in range(self.k) for key in self._copies[p] if key not in messages]
        if missing:
            short = [p for p in range(self.k) if len(copies[p]) < self.r]
            raise NotDecodableError(
                f"{self.name} needs all r = {self.r} copies of every file; files "
                f"{short[:10]} have fewer",
                needed=len(missing),
                candidates=missing,
            )
        self._refuse_nonfinite(messages)
        total = np.zeros(self.message_length(length))
        used: list[MessageKey] = []
        outvoted: list[MessageKey] = []
        # two values with r' copies each would need r + 1 copies: no rival to look for
        for ballot in self._ballots(messages, length, copies):
            if ballot.winner is None:
                raise self._beyond_a(
                    f"no value has r' = {self.quorum} senders for file {ballot.unit} "
                    f"(messages {ballot.keys})"
                )
            total += ballot.vectors[ballot.winner]
            used.append(ballot.keys[ballot.winner])
            outvoted += ballot.agreeing(False)
        liars = sorted({self.worker_of(key) for key in outvoted})
        if len(liars) > self.a:
            raise self._beyond_a(f"workers {liars} are outvoted in their files")
        return DecodeResult(total[:length], tuple(used), 1.0, adversaries=tuple(sorted(outvoted)))  # type: ignore[type-var]

    # -- robust aggregation ---------------------------------------------------------------
    def aggregation_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int
    ) -> AggregationInputs:
        """One vote per file whose copies in hand have a value sent by ``r'`` of them."""
        return self.majority_inputs(messages, length, self.k)

    def aggregation_count(self) -> int:
        return self.k

    def aggregation_corrupted(self, liars: Iterable[int]) -> int:
        """Files with ``r' = (r + 1) / 2`` liars among their holders (the paper's distorted
        files: their vote can be the liars')."""
        chosen = sorted({int(w) for w in liars})
        if not chosen:
            return 0
        return int((self._holds[chosen].sum(axis=0) >= self.quorum).sum())

    def votes(self) -> Votes:
        """Each file's vote: its ``r`` holders, one per parallel class, ``r'`` of them lying
        make it theirs (``gradcode.codes.distortion.worst_distortions``)."""
        return Votes(self._holds.astype(bool), self.parallel_classes(), self.quorum)

    def distortion_bound(self, liars: int) -> float:
        """The paper's upper bound ``gamma`` on ``c_max^(q)``, the most files ``q = liars``
        workers can distort (``r >= 3``; Sec. 5.1, Claim 1 with Lemma 2's ``mu_1 = 1 / r``).

        Proof sketch. The ``q`` liars hold ``q l`` copies, spread over the set ``N`` of files
        any of them holds. A distorted file takes at least ``r'`` of those copies, every other
        file of ``N`` at least one, so ``c r' + (|N| - c) <= q l``, i.e.
        ``c <= (q l - |N|) / (r' - 1)``. The normalised ``A A^T`` of each placement (``A = H /
        sqrt(l r)``) has second eigenvalue ``mu_1 = 1 / r`` (the paper's Lemma 2: MOLS and Case
        1 for ``2 < r < l``, Case 2 for ``r | l``); the expansion bound for biregular graphs then
        gives ``|N| >= q l / (r (mu_1 + (1 - mu_1) q / K)) = q l / (1 + (r - 1) q / K)``.
        Together: ``c_max^(q) <= (2 q^2 l / K) / (1 + (r - 1) q / K)``, i.e. ``(2 q^2 / r) / (1 +
        (r - 1) q / (r l))`` for ``K = r l`` and ``f (2 q^2 / r^2) / (r + (r - 1) q / r)`` for
        Case 2's ``K = r^2``, the paper's two forms.
        """
        q = check_int("liars", self.name, liars)
        require(self.r >= 3, f"{self.name}: the bound needs r >= 3 (got r={self.r})")
        return (2 * q * q * self.l / self.n) / (1 + (self.r - 1) * q / self.n)
