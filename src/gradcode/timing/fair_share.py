"""Flows through one receiving link, shared fairly (``gradcode.timing.links``' model).

Flows that share a receiver's link share its rate max-min fairly: every active flow gets an
equal share, except that none gets more than its own sender's link, and what a capped flow
leaves is shared by the others (as TCP flows through one bottleneck do, ideally); each
finishes when its last byte is through. ``fair_finish`` runs that schedule event by event for
one trial (``O(flows^2)``), ``fair_finish_trials`` the same events for every trial at once;
where the flows have one size and one cap and none waits for another, ``equal_flows_finish``
runs it for all trials at once in fewer steps (``equal_flows`` says when).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def message_time(nbytes: float, rate: float, master_rate: float, latency: float = 0.0) -> float:
    """Seconds one message of ``nbytes`` takes between a node and the master on idle links."""
    return latency + nbytes / min(rate, master_rate)


def fair_shares(caps: np.ndarray, capacity: float) -> np.ndarray:
    """Max-min fair rates of flows capped at ``caps`` through one link of ``capacity``."""
    rates = np.empty(len(caps))
    left, remaining = capacity, len(caps)
    for index in np.argsort(caps, kind="stable"):
        share = left / remaining
        rates[index] = min(caps[index], share)
        left -= rates[index]
        remaining -= 1
    return rates


def fair_finish(
    ready: Sequence[float],
    sizes: Sequence[float],
    caps: Sequence[float],
    capacity: float,
    after: Sequence[int] | None = None,
) -> np.ndarray:
    """When each flow's last byte is through one receiving link (fair sharing, module
    docstring): flow ``j`` becomes ready at ``ready[j]`` (``inf``: never), has ``sizes[j]``
    bytes and is capped at ``caps[j]`` bytes per second; ``after[j]`` (or -1) is a flow that
    must finish before ``j`` starts (the sender's previous message)."""
    count = len(ready)
    ready_ = np.asarray(ready, dtype=np.float64)
    size = np.asarray(sizes, dtype=np.float64)
    cap = np.asarray(caps, dtype=np.float64)
    before = np.full(count, -1) if after is None else np.asarray(after, dtype=np.intp)
    chained = before >= 0
    finish = np.full(count, np.inf)
    left = size.copy()
    started = np.zeros(count, dtype=bool)
    active: list[int] = []
    now = 0.0
    while True:
        # when each flow not yet started may start (inf: not ready, or its predecessor runs)
        starts = ready_.copy()
        starts[chained] = np.maximum(starts[chained], finish[before[chained]])
        starts[started] = np.inf
        if not active:
            first = float(starts.min()) if count else np.inf
            if not np.isfinite(first):
                break
            now = max(now, first)
        newly = np.flatnonzero(starts <= now)
        if newly.size:
            for j in newly:
                started[j] = True
                if left[j] <= 0:
                    finish[j] = now
                else:
                    active.append(int(j))
            continue  # a zero-byte flow may have let its successor start: look again
        upcoming = float(starts.min()) if count else np.inf
        rates = fair_shares(cap[active], capacity)
        times = left[active] / rates
        step = min(float(times.min()), upcoming - now)
        left[active] -= rates * step
        now += step
        still = []
        for position, j in enumerate(active):
            if times[position] <= step * (1 + 1e-12):
                left[j] = 0.0
                finish[j] = now
            else:
                still.append(j)
        active = still
    return finish


def fair_finish_trials(
    ready: np.ndarray,
    sizes: Sequence[float],
    caps: Sequence[float],
    capacity: float,
    after: np.ndarray | Sequence[int] | None = None,
) -> np.ndarray:
    """``fair_finish`` for every trial at once: ``ready[t, q]`` (``inf``: never) -> finish
    times, same shape; ``after`` one predecessor list for all trials or one per trial
    (``(trials, flows)``). Each step takes every trial one event further, the one
    ``fair_finish`` takes next (a start, a finish, or a wait for the next start), so a trial
    ends after as many steps as it has events, and the steps are numpy operations over the
    trials instead of a Python loop per trial (``recommend`` over ``ye-abbe``'s chained
    messages at n = 8 took 18.6 s with that loop and 1.9 s with this;
    docs/measurements/ci-time.md)."""
    ready = np.atleast_2d(np.asarray(ready, dtype=np.float64))
    trials, count = ready.shape
    finish = np.full(ready.shape, np.inf)
    if count == 0 or trials == 0:
        return finish
    cap = np.asarray(caps, dtype=np.float64)
    before = np.full(count, -1, dtype=np.intp) if after is None else np.asarray(after, np.intp)
    before = np.broadcast_to(before, ready.shape)
    chained, predecessor = before >= 0, np.maximum(before, 0)
    one_cap = bool(np.all(cap == cap[0]))
    rows = np.arange(trials)[:, None]
    left = np.broadcast_to(np.asarray(sizes, dtype=np.float64), ready.shape).copy()
    started = np.zeros(ready.shape, dtype=bool)
    active = np.zeros(ready.shape, dtype=bool)
    now = np.zeros(trials)
    while True:
        # when each flow not yet started may start (inf: not ready, or its predecessor runs)
        starts = np.where(chained, np.maximum(ready, finish[rows, predecessor]), ready)
        starts[started] = np.inf
        upcoming = starts.min(axis=1)
        idle = ~active.any(axis=1)
        live = ~idle | np.isfinite(upcoming)
        if not live.any():
            return finish
        now = np.where(idle & live, np.maximum(now, upcoming), now)
        newly = starts <= now[:, None]  # none in a trial that is over: its starts are inf
        starting = newly.any(axis=1)
        started |= newly
        zero = newly & (left <= 0)
        finish = np.where(zero, now[:, None], finish)
        active |= newly & ~zero
        # a trial that started flows looks again (a zero-byte flow may have let its successor
        # start); the others move to their next finish or start
        moving = live & ~starting
        if not moving.any():
            continue
        flowing = active & moving[:, None]
        level = _fair_level(cap, flowing, capacity, one_cap)
        rates = np.where(flowing, np.minimum(cap, level), 1.0)
        times = np.where(flowing, left / rates, np.inf)
        step = np.where(moving, np.minimum(times.min(axis=1), upcoming - now), 0.0)
        left = np.where(flowing, left - rates * step[:, None], left)
        now = now + step
        done = flowing & (times <= step[:, None] * (1 + 1e-12))
        left[done] = 0.0
        finish = np.where(done, now[:, None], finish)
        active &= ~done


def _fair_level(cap: np.ndarray, flowing: np.ndarray, capacity: float, one_cap: bool) -> np.ndarray:
    """Per trial, the share ``L`` of a max-min fair link: flow ``q`` of ``flowing[t]`` gets
    ``min(cap[q], L[t])`` (``fair_shares``: flows by cap, each the rest's even share), as a
    ``(trials, 1)`` column (``inf``: every flow at its cap); ``one_cap``: every cap the same,
    so the even share it is."""
    active = flowing.sum(axis=1)
    if one_cap:
        return (capacity / np.maximum(active, 1))[:, None]
    ordered = np.sort(np.where(flowing, cap, np.inf), axis=1)
    below = np.cumsum(np.where(np.isfinite(ordered), ordered, 0.0), axis=1) - ordered
    below = np.where(np.isfinite(ordered), below, 0.0)
    position = np.arange(cap.size)
    remaining = active[:, None] - position
    share = np.where(remaining > 0, (capacity - below) / np.maximum(remaining, 1), np.inf)
    # the first flow whose cap exceeds its even share of what the smaller ones left sets L
    over = (ordered > share) & (remaining > 0)
    some = over.any(axis=1)
    level = np.where(some, share[np.arange(len(active)), over.argmax(axis=1)], np.inf)
    return level[:, None]


def equal_flows_finish(ready: np.ndarray, size: float, cap: float, capacity: float) -> np.ndarray:
    """``fair_finish`` for every trial at once when the flows have one ``size`` and one ``cap``
    and none waits for another: ``ready[t, q]`` (``inf``: never) -> finish times, same shape.

    Every active flow then gets the same rate ``min(cap, capacity / active)``, so a flow
    finishes when the service every active flow has had since it started reaches ``size``,
    and flows finish in the order they started. The schedule is a merge of the sorted starts
    with those finishes: ``2 Q`` steps of a few numpy operations over the trials, instead of
    ``fair_finish``'s Python loop over the active flows at each of its ``2 Q`` events per
    trial."""
    ready = np.atleast_2d(np.asarray(ready, dtype=np.float64))
    trials, count = ready.shape
    finish = np.full(ready.shape, np.inf)
    if count == 0 or trials == 0:
        return finish
    order = np.argsort(ready, axis=1, kind="stable")
    starts = np.take_along_axis(ready, order, axis=1)
    done = np.full(ready.shape, np.inf)  # finish times in start order
    # per trial: time, service per active flow so far, each flow's service at its start
    now = np.zeros(trials)
    service = np.zeros(trials)
    at_start = np.zeros(ready.shape)
    started = np.zeros(trials, dtype=np.intp)
    ended = np.zeros(trials, dtype=np.intp)
    rows = np.arange(trials)
    last = count - 1
    for _ in range(2 * count):
        active = started - ended
        has_next = started < count
        next_start = np.where(has_next, starts[rows, np.minimum(started, last)], np.inf)
        rate = np.minimum(cap, capacity / np.maximum(active, 1))
        due = at_start[rows, np.minimum(ended, last)] + size  # first active flow's end
        next_end = np.where(active > 0, now + (due - service) / rate, np.inf)
        start_first = next_start <= next_end  # a tie starts first: a zero-length step
        when = np.minimum(next_start, next_end)
        live = np.isfinite(when)
        if not live.any():
            break
        go = live & start_first
        if go.any():
            g = rows[go]
            service[g] += np.where(active[g] > 0, rate[g] * (when[g] - now[g]), 0.0)
            now[g] = when[g]
            at_start[g, started[g]] = service[g]
            started[g] += 1
        end = live & ~start_first
        if end.any():
            e = rows[end]
            service[e] = due[e]
            now[e] = when[e]
            done[e, ended[e]] = when[e]
            ended[e] += 1
    np.put_along_axis(finish, order, done, axis=1)
    return finish


def equal_flows(sizes: np.ndarray, caps: np.ndarray, before: np.ndarray) -> bool:
    """Whether ``equal_flows_finish`` applies: one size, one cap, no flow after another."""
    return bool(
        sizes.size and np.all(sizes == sizes[0]) and np.all(caps == caps[0]) and np.all(before < 0)
    )
