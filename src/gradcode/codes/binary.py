"""Binary gradient coding (paper 003: Charalambides, Mahdavifar, Hero, "Numerically Stable
Binary Gradient Coding", Sections III-VI).

Construction (Sec. III). Write ``n = l (s + 1) + r`` with ``0 <= r < s + 1``. Worker ``i``
belongs to the congruence class ``C_c``, ``c = i mod (s + 1)``; classes ``C_0 .. C_{r-1}`` have
``l + 1`` members, the others ``l``. Every class holds every one of the ``k`` partitions exactly
once, as contiguous blocks in member order: the ``j``-th member of a class gets the block right
after the ``(j - 1)``-th member's. Within a class the loads differ by at most one, the first
``k mod |C_c|`` members taking the extra partition, so classes of equal size get identical
blocks and the encoding matrix ``B`` (0/1, shape ``(n, k)``) is as close to block diagonal as
the class structure allows. The paper takes ``k = n`` (the default); any
``k >= ceil(n / (s + 1))`` works (every worker then gets at least one partition).

Encoding: worker ``i`` sends the plain sum of its partials (``B`` is binary; no scaling).

Decoding (Sec. IV). Any ``n - s`` responders miss at most ``s`` workers, so by pigeonhole one
of the ``s + 1`` classes is complete, and the gradient is the plain sum of that class's
messages, since the class partitions the data. A counter per class finds a complete class in
``O(n)`` integer operations; the classes of ``l`` members are searched first (fewer messages
to add, as in the paper's Algorithm 3). ``is_decodable`` is exactly "some class complete",
which often holds before ``n - s`` workers have answered. No real number is multiplied or
divided anywhere: decode is ``|C_c| - 1`` in-place ``np.add`` passes into one output buffer.

Load distribution (Sec. V). With ``k = n`` and ``r > 0`` the spread of the loads is exactly
``Delta = max - min = ceil(r / l) + ceil((s + 1 - r) / (l + 1))`` (``Delta = 0`` iff
``(s + 1) | n``; ``Delta = 1`` never occurs), and it is the least possible spread of any
assignment in which every class partitions the data (our reading of Proposition 3, whose
statement the extraction lost). Hence ``Delta <= 2``
when ``l >= s``; for ``l = s - 1`` ``Delta = 3`` only at ``r = s``; for ``l = s - 2``
(``s >= 4``) ``Delta = 3`` for exactly three values of ``r`` (``1, s - 1, s``); and
``Delta <= 3`` whenever ``2 l >= s`` (tight: for ``l < s / 2`` some ``r`` gives ``Delta >= 4``,
e.g. ``n = 7, s = 5``: loads 4, 3 and 7). The extraction of the paper lost the symbols of
Lemma 4, so these statements were re-derived and are checked for every ``n <= 60`` in the
tests; they agree with its surviving text ("only three values ... will not exceed 3").

Heterogeneous workers (Sec. VI). ``times[i]`` is worker ``i``'s expected time per partition.
The paper asks ``w_j t_j`` equal across types with every class still covering the data; for
groups of ``tau_j`` workers spread evenly over the classes this gives
``w_j = k (s + 1) / (t_j sum_i tau_i / t_i)`` (``type_loads``). Those are real numbers "which
we round"; here the rounding is made precise and keeps the class structure exact: inside each
class the ``k`` partitions go one at a time to the member that would finish its next one
earliest (expected time ``(w_i + 1) t_i``, ties to the lower index), starting from one each.
That minimises the class's largest expected finishing time over integer loads of at least one
partition (an idle worker would still be waited for by its class), reduces to the
floor/ceil rule of Sec. III for equal times, and returns the paper's loads exactly whenever
they are integers (``equalizing_partitions`` gives the least such ``k``). Decoding is
unchanged. Workers ``0 .. tau_1 - 1`` of one type, the next ``tau_2`` of the other, ... spread
each type evenly over the classes when ``(s + 1) | tau_j`` (the paper's assumption); otherwise
the classes differ in composition and only the times within each class are equalised.

Shapes: ``partials`` ``(load(i), l)``, a message ``(l,)``, ``decode(...)`` ``(length,)``;
``encoding_matrix()`` ``(n, k, 1)``. ``m = 1``, ``a = 0``.

Numerical soundness (measured with ``verify`` for every ``(n, s)`` with ``n <= 50``: all
straggler patterns for ``n <= 12``, 100 random ones above, 127,878 patterns in all): the
largest relative decode error was 3.9e-16, the round-off of a plain sum, so
``numerically_sound_up_to = None``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from gradcode.codes.base import DecodeResult, NotDecodableError, check_int, require
from gradcode.codes.linear import LinearCode

NAME = "binary"
#: finest partition count ``BinaryCode.for_worker_times`` offers, in multiples of ``n``
_SPEED_PARTITIONS = 4


def _as_fraction(name: str, value: Any) -> Fraction:
    """A positive finite time as an exact fraction (floats by their shortest decimal form)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | np.number):
        raise ValueError(f"{NAME} needs numeric {name} (got {name}={value!r})")
    if isinstance(value, Fraction):
        exact = value
    elif isinstance(value, int | np.integer):
        exact = Fraction(int(value))
    else:
        require(math.isfinite(float(value)), f"{NAME} needs finite {name} (got {name}={value})")
        exact = Fraction(repr(float(value)))
    require(exact > 0, f"{NAME} needs {name} > 0 (got {name}={value})")
    return exact


def _check_times(n: int, times: Sequence[Any] | None) -> tuple[Fraction, ...]:
    if times is None:
        return (Fraction(1),) * n
    if isinstance(times, str | bytes) or not isinstance(times, Sequence | np.ndarray):
        raise ValueError(f"{NAME} needs times as a sequence of n numbers (got times={times!r})")
    require(
        len(times) == n,
        f"{NAME} needs one time per worker, len(times) == n (got len(times)={len(times)}, n={n})",
    )
    return tuple(_as_fraction(f"times[{i}]", t) for i, t in enumerate(times))


def congruence_classes(n: int, s: int) -> tuple[tuple[int, ...], ...]:
    """The ``s + 1`` classes of worker indices modulo ``s + 1``, each in increasing order."""
    return tuple(tuple(range(c, n, s + 1)) for c in range(s + 1))


def _class_loads(k: int, times: Sequence[Fraction]) -> list[int]:
    """Integer loads summing to ``k`` that minimise ``max_i w_i t_i`` with every ``w_i >= 1``.

    Greedy over unit jobs on related machines: taking the ``k`` smallest completion times
    ``j t_i`` (``j >= 1``) is optimal, and they are increasing in ``j`` for each worker.
    """
    scale = math.lcm(*(t.denominator for t in times))
    integral = [int(t * scale) for t in times]  # exact comparisons on integers
    loads = [1] * len(times)
    heap = [(2 * t, i) for i, t in enumerate(integral)]
    heapq.heapify(heap)
    for _ in range(k - len(times)):
        _, i = heapq.heappop(heap)
        loads[i] += 1
        heapq.heappush(heap, ((loads[i] + 1) * integral[i], i))
    return loads


def heterogeneous_allocation(
    n: int, s: int, times: Sequence[Any] | None = None, k: int | None = None
) -> np.ndarray:
    """Loads of ``BinaryCode(n, s, k, times)``, shape ``(n,)``.

    Inside each congruence class the ``k`` partitions are split so that the class's largest
    expected finishing time ``w_i * times[i]`` is as small as integer loads allow.
    """
    return BinaryCode(n, s, k=k, times=times).loads()


def type_loads(k: int, s: int, counts: Sequence[int], times: Sequence[Any]) -> tuple[Fraction, ...]:
    """Section VI's real-valued loads ``w_j`` for groups of ``counts[j]`` workers of time ``t_j``.

    Solves ``w_j t_j = w_1 t_1`` for all ``j`` and ``sum_j counts[j] w_j = k (s + 1)`` (every
    class covers the ``k`` partitions once): ``w_j = k (s + 1) / (t_j sum_i counts[i] / t_i)``.
    """
    k = check_int("k", NAME, k, minimum=1)
    s = check_int("s", NAME, s)
    require(
        len(counts) == len(times) >= 1,
        f"{NAME} needs one time per group (got {len(counts)} counts, {len(times)} times)",
    )
    counts = [check_int(f"counts[{j}]", NAME, c, minimum=1) for j, c in enumerate(counts)]
    exact = [_as_fraction(f"times[{j}]", t) for j, t in enumerate(times)]
    rate = sum((Fraction(c) / t for c, t in zip(counts, exact, strict=True)), Fraction(0))
    return tuple(k * (s + 1) / (t * rate) for t in exact)


def equalizing_partitions(n: int, s: int, times: Sequence[Any]) -> int:
    """Least ``k`` for which every class's expected finishing times are exactly equal.

    In class ``C`` worker ``i`` must get ``k (1 / t_i) / sum_{j in C} (1 / t_j)`` partitions;
    ``k`` is the least common multiple of the denominators of those shares.
    """
    n = check_int("n", NAME, n, minimum=1)
    s = check_int("s", NAME, s)
    require(s < n, f"{NAME} needs s < n (got n={n}, s={s})")
    exact = _check_times(n, times)
    denominators = []
    for members in congruence_classes(n, s):
        rate = sum((1 / exact[i] for i in members), Fraction(0))
        denominators += [(1 / (exact[i] * rate)).denominator for i in members]
    return math.lcm(*denominators)


class BinaryCode(LinearCode):
    """Binary gradient code: classes mod ``s + 1`` each partition the data; decode = plain sum.

    Parameters
    ----------
    n : number of workers, ``n >= 1``.
    s : stragglers tolerated, ``0 <= s < n`` (no ``(s + 1) | n`` requirement).
    k : number of partitions, default ``n`` (the paper's choice); ``k >= ceil(n / (s + 1))``.
    times : optional expected time per partition of each worker, length ``n`` (Sec. VI);
        loads are then sized so that expected finishing times are equal within each class.
    """

    name = NAME
    numerically_sound_up_to = None

    def __init__(
        self, n: int, s: int, k: int | None = None, times: Sequence[Any] | None = None
    ) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.s = check_int("s", self.name, s)
        require(self.s < self.n, f"{self.name} needs s < n (got n={self.n}, s={self.s})")
        self.k = self.n if k is None else check_int("k", self.name, k, minimum=1)
        self.a, self.m = 0, 1
        largest = -(-self.n // (self.s + 1))
        require(
            self.k >= largest,
            f"{self.name} needs k >= ceil(n / (s + 1)) so every worker gets a partition "
            f"(got n={self.n}, s={self.s}, k={self.k})",
        )
        self._times_given = None
        if times is not None and isinstance(times, Sequence | np.ndarray):
            self._times_given = tuple(t.item() if isinstance(t, np.generic) else t for t in times)
        self._times = _check_times(self.n, times)
        self.classes = congruence_classes(self.n, self.s)
        # the paper's Algorithm 3 looks at the smaller classes (l members) first
        self._search_order = sorted(range(self.s + 1), key=lambda c: (len(self.classes[c]), c))

        self._parts: list[tuple[int, ...]] = [()] * self.n
        for members in self.classes:
            start = 0
            for worker, load in zip(
                members, _class_loads(self.k, [self._times[i] for i in members]), strict=True
            ):
                self._parts[worker] = tuple(range(start, start + load))
                start += load
        self._loads = np.array([len(p) for p in self._parts])

        encoding = np.zeros((self.n, self.k, 1))
        for worker, parts in enumerate(self._parts):
            encoding[worker, list(parts), 0] = 1.0
        self._init_linear(encoding)

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Every ``(n, s)`` with ``0 <= s < n <= max_n`` (``k = n``), then a representative
        family: the fewest and more partitions than workers, and heterogeneous workers (two
        types with ``(s + 1) | tau_j``, at the default and at the equalising ``k``; three
        types; two types unevenly spread over the classes)."""
        for n in range(1, max_n + 1):
            for s in range(n):
                yield {"n": n, "s": s}
        extras: list[dict[str, Any]] = [
            {"n": 7, "s": 2, "k": 3},
            {"n": 10, "s": 3, "k": 25},
            {"n": 12, "s": 4, "k": 5},
            {"n": 4, "s": 1, "times": (1, 1, 2, 2)},
            {"n": 4, "s": 1, "k": 3, "times": (1, 1, 2, 2)},
            {"n": 6, "s": 2, "k": 4, "times": (1, 1, 1, 3, 3, 3)},
            {"n": 8, "s": 1, "times": (1,) * 4 + (2,) * 4},
            {"n": 8, "s": 1, "k": 6, "times": (1,) * 4 + (2,) * 4},
            {"n": 9, "s": 2, "k": 7, "times": (1, 1, 1, 2, 2, 2, 4, 4, 4)},
            {"n": 9, "s": 2, "times": (1, 1, 1, 2, 2, 2, 4, 4, 4)},
            {"n": 10, "s": 3, "times": (1,) * 5 + (3,) * 5},
            {"n": 12, "s": 2, "k": 10, "times": (1.0,) * 6 + (1.5,) * 6},
            {"n": 12, "s": 2, "times": (1.0,) * 6 + (1.5,) * 6},
            {"n": 30, "s": 4, "times": (1,) * 15 + (2.5,) * 15},
            {"n": 40, "s": 3, "k": 60, "times": (1,) * 20 + (2,) * 20},
        ]
        for params in extras:
            if params["n"] <= max_n:
                yield params

    @classmethod
    def for_worker_times(cls, times: Sequence[float]) -> Iterator[dict[str, Any]]:
        """Sec. VI's allocation for these workers: every ``s < n`` with ``times`` given, at
        ``k = n`` and ``2 n`` and at the equalising ``k`` when it is at most ``4 n`` (more
        partitions let the integer loads follow the times more closely)."""
        n = len(times)
        for s in range(n):
            counts = {n, 2 * n}
            equal = equalizing_partitions(n, s, times)
            if equal <= _SPEED_PARTITIONS * n:
                counts.add(equal)
            for k in sorted(counts):
                if k >= -(-n // (s + 1)):
                    yield {"n": n, "s": s, "k": k, "times": list(times)}

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"n": self.n, "s": self.s, "k": self.k}
        if self._times_given is not None:
            params["times"] = self._times_given
        return params

    # -- assignment -------------------------------------------------------------------------
    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._parts[worker]

    def load(self, worker: int) -> int:
        return len(self._parts[worker])

    def loads(self) -> np.ndarray:
        return self._loads.copy()

    def times(self) -> np.ndarray:
        """Expected time per partition of each worker, shape ``(n,)`` (ones when homogeneous)."""
        return np.array([float(t) for t in self._times])

    def expected_times(self) -> np.ndarray:
        """Expected finishing time ``load(i) * times[i]`` of each worker, shape ``(n,)``."""
        return np.array([float(len(p) * t) for p, t in zip(self._parts, self._times, strict=True)])

    # -- messages ---------------------------------------------------------------------------
    def encode_message(self, key: int, partials: np.ndarray) -> np.ndarray:
        worker = self.worker_of(key)
        need = len(self._parts[worker])
        partials = np.asarray(partials, dtype=np.float64)
        if partials.ndim != 2 or partials.shape[0] < need:
            raise ValueError(
                f"{self.name}: worker {worker} needs partials of shape ({need}, l) "
                f"(got {partials.shape})"
            )
        return np.add.reduce(partials[:need], axis=0)

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return self.encode_message(worker, partials)

    # -- decoding ---------------------------------------------------------------------------
    def _missing(self, keys: Iterable[int]) -> list[int]:
        """Number of members each class still lacks."""
        missing = [len(members) for members in self.classes]
        modulus = self.s + 1
        for key in set(keys):
            if isinstance(key, bool) or not isinstance(key, int | np.integer):
                raise ValueError(f"{self.name}: unknown message key {key!r}")
            if not 0 <= key < self.n:
                raise ValueError(f"{self.name}: unknown message key {key!r} (n={self.n})")
            missing[key % modulus] -= 1
        return missing

    def _complete_class(self, keys: Iterable[int]) -> int:
        """A class all of whose members are in ``keys``; ``NotDecodableError`` otherwise.

        The error's ``needed`` is the fewest members any class still lacks; ``candidates`` are
        the missing members of every class that lacks that few (any one of them brings the
        gradient one response closer).
        """
        keys = set(keys)
        missing = self._missing(keys)
        for c in self._search_order:
            if missing[c] == 0:
                return c
        fewest = min(missing)
        closest = [c for c in self._search_order if missing[c] == fewest]
        candidates = sorted(w for c in closest for w in self.classes[c] if w not in keys)
        first = closest[0]
        lacking = [w for w in self.classes[first] if w not in keys]
        raise NotDecodableError(
            f"{self.name}: no congruence class mod {self.s + 1} is complete; class {first} "
            f"(workers {list(self.classes[first])}) is closest and still needs workers {lacking}",
            needed=fewest,
            candidates=candidates,
        )

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Some class complete: the fastest class's slowest member."""
        arrivals = self._arrivals(arrivals)
        return np.min([arrivals[:, list(members)].max(axis=1) for members in self.classes], axis=0)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return 0 in self._missing(keys)

    def decodable_class(self, keys: Iterable[int]) -> int | None:
        """The class whose messages ``decode`` would add up, or ``None`` if none is complete."""
        try:
            return self._complete_class(keys)
        except NotDecodableError:
            return None

    def _solve(self, keys: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        members = self.classes[self._complete_class(keys)]
        return members, np.ones((1, len(members)))

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        """The sum of one complete class's messages; condition number 1 (it only adds)."""
        members = self.classes[self._complete_class(messages)]
        chosen = [np.asarray(messages[worker]) for worker in members]
        for worker, message in zip(members, chosen, strict=True):
            # np.add would silently broadcast a wrong-sized message
            if message.shape != (length,):
                raise ValueError(
                    f"{self.name}: message of worker {worker} must have shape ({length},) "
                    f"(got {message.shape})"
                )
        total = np.array(chosen[0], dtype=np.float64)
        for message in chosen[1:]:
            np.add(total, message, out=total)
        return DecodeResult(total, tuple(members), 1.0)
