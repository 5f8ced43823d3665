"""The Monte Carlo driver: seeded, chunked, with common random numbers across schemes.

Seeding. The trials are cut into fixed blocks of ``BLOCK`` trials; block ``b`` draws from
``Generator(PCG64(SeedSequence(seed).spawn(blocks)[b]))``. A chunk is a run of whole blocks
processed together (``chunk`` trials, fewer for schemes with many workers, rounded up to whole
blocks), so the chunk size bounds the memory but does not change a single draw: results depend
on ``(seed, trials)`` only. Statistics are merged block by block in block order, so even the
last bits are independent of the chunk.

Common random numbers. The draws depend on the number of workers only (see
``gradcode.timing.model``), and every scheme configuration with the same number of workers is
simulated on the very same draws: differences between schemes are then much more precise than
their separate confidence intervals suggest, and the draws of a chunk can be reused instead of
regenerated. Draws are kept in a least-recently-used cache of ``cache_bytes`` (regenerated,
identically, when evicted), which lets the scheme loop be the outer one: a progress line is
printed as each configuration finishes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from gradcode.lru import LRUCache
from gradcode.sim.spec import SchemeEntry, Spec
from gradcode.sim.stats import Moments
from gradcode.sim.table import ResultRow
from gradcode.timing.model import Draws, TimingModel

#: trials per seeding block (the unit of reproducibility)
BLOCK = 4096
DEFAULT_CHUNK = 65536
#: a chunk holds at most about this many worker draws per array (32 MiB of float64), so that
#: schemes with thousands of workers (trees) stay bounded too; at least one block
CHUNK_ELEMENTS = 2**22
DEFAULT_CACHE_BYTES = 512 * 2**20


@dataclass(frozen=True)
class _Chunk:
    index: int
    blocks: range  # block indices
    sizes: tuple[int, ...]  # trials per block


def _chunks(trials: int, chunk: int, workers: int) -> Iterator[_Chunk]:
    blocks = math.ceil(trials / BLOCK)
    chunk = min(chunk, CHUNK_ELEMENTS // workers)
    per_chunk = max(1, math.ceil(chunk / BLOCK))
    for index, start in enumerate(range(0, blocks, per_chunk)):
        members = range(start, min(start + per_chunk, blocks))
        sizes = tuple(min(BLOCK, trials - b * BLOCK) for b in members)
        yield _Chunk(index, members, sizes)


class _DrawCache:
    """The draws of every (chunk, workers), generated on demand and kept while they fit."""

    def __init__(
        self, model: TimingModel, seeds: list[np.random.SeedSequence], budget: int
    ) -> None:
        self.model, self.seeds = model, seeds
        self.entries: LRUCache[Draws] = LRUCache(
            budget, weight=lambda draws: sum(array.nbytes for array in draws.values())
        )

    def get(self, chunk: _Chunk, workers: int) -> Draws:
        def draw() -> Draws:
            parts = [
                self.model.sample(
                    np.random.Generator(np.random.PCG64(self.seeds[b])), size, workers
                )
                for b, size in zip(chunk.blocks, chunk.sizes, strict=True)
            ]
            return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}

        return self.entries.get_or_compute((chunk.index, workers), draw)


def estimate(
    config: SchemeEntry,
    model: TimingModel,
    cache: _DrawCache,
    *,
    trials: int,
    chunk: int,
    confidence: float,
    length: int | None,
) -> ResultRow:
    """Simulate one scheme configuration over all chunks and summarise it."""
    scheme = config.scheme
    prepared = model.prepare(scheme)
    chunks = _chunks(trials, chunk, scheme.n)
    times = Moments()
    messages = 0.0
    for part in chunks:
        outcome = prepared.run(cache.get(part, scheme.n))
        start = 0
        for size in part.sizes:
            times.add(outcome.times[start : start + size])
            messages += float(outcome.messages[start : start + size].sum())
            start += size
    low, high = times.interval(confidence)
    mean_messages = messages / times.trials
    params = dict(scheme.params())
    params.setdefault("k", scheme.k)
    return ResultRow(
        label=config.label,
        scheme=config.name,
        params=params,
        workers=scheme.n,
        trials=times.trials,
        mean_time=times.estimate(),
        ci_low=low,
        ci_high=high,
        std_time=times.std(),
        messages=mean_messages,
        vectors=mean_messages / scheme.m,
        floats=None if length is None else mean_messages * scheme.message_length(length),
        reference_time=config.reference,
        extras=model.extras(scheme),
    )


def simulate(
    spec: Spec,
    *,
    trials: int,
    seed: int,
    chunk: int = DEFAULT_CHUNK,
    confidence: float | None = None,
    progress: Callable[[str], None] | None = None,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> list[ResultRow]:
    """One ``ResultRow`` per scheme configuration of ``spec``, in spec order.

    ``trials`` Monte Carlo trials per configuration, seeded by ``seed`` (see the module
    docstring); ``chunk`` trials are simulated at once; ``confidence`` overrides the spec's
    level; ``progress`` receives one line per finished configuration.
    """
    if trials < 2:
        raise ValueError(f"trials must be >= 2 (got {trials})")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 (got {chunk})")
    level = spec.confidence if confidence is None else confidence
    seeds = np.random.SeedSequence(seed).spawn(math.ceil(trials / BLOCK))
    cache = _DrawCache(spec.model, seeds, cache_bytes)
    rows = []
    for number, config in enumerate(spec.schemes, start=1):
        row = estimate(
            config,
            spec.model,
            cache,
            trials=trials,
            chunk=chunk,
            confidence=level,
            length=spec.length,
        )
        rows.append(row)
        if progress is not None:
            progress(_progress_line(number, len(spec.schemes), row))
    return rows


def _progress_line(number: int, total: int, row: ResultRow) -> str:
    params = " ".join(f"{k}={v}" for k, v in row.params.items())
    return (
        f"[{number}/{total}] {row.label} ({params}): mean {row.mean_time:.6g} "
        f"[{row.ci_low:.6g}, {row.ci_high:.6g}], {row.messages:.4g} messages"
    )
