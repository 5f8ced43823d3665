"""The single-port receiver against a direct first-come-first-served loop."""

import numpy as np

from gradcode.timing.queue import fifo_departures


def _loop(ready, service):
    out = np.empty_like(ready)
    for row in range(ready.shape[0]):
        free = -np.inf
        for q in np.argsort(ready[row], kind="stable"):
            free = max(free, ready[row, q]) + service[row, q]
            out[row, q] = free
    return out


def test_matches_the_loop_with_constant_and_varying_service():
    rng = np.random.default_rng(0)
    ready = rng.exponential(size=(50, 9))
    ready[:10] = np.round(ready[:10], 1)  # ties
    np.testing.assert_allclose(
        fifo_departures(ready, 0.3), _loop(ready, np.full(ready.shape, 0.3)), rtol=1e-12
    )
    service = rng.uniform(0.05, 0.5, size=ready.shape)
    np.testing.assert_allclose(fifo_departures(ready, service), _loop(ready, service), rtol=1e-12)


def test_zero_service_is_the_identity_and_idle_port_waits():
    ready = np.array([[3.0, 1.0, 2.0]])
    np.testing.assert_array_equal(fifo_departures(ready, 0.0), ready)
    np.testing.assert_allclose(fifo_departures(np.array([[0.0, 0.0, 5.0]]), 1.0), [[1, 2, 6]])
