"""The shared helpers that have one home each: the atomic writer and the JSON sanitiser."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from gradcode.atomic import atomic_file, write_atomic
from gradcode.blas import BLAS_VARIABLES
from gradcode.jsonable import to_jsonable


def test_a_file_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "deep" / "table.csv"
    write_atomic(target, "a,b\n1,2\n")
    assert target.read_text() == "a,b\n1,2\n"
    with pytest.raises(RuntimeError), atomic_file(target) as stream:
        stream.write("half a table")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "a,b\n1,2\n"  # the old file, untouched
    assert sorted(p.name for p in target.parent.iterdir()) == ["table.csv"]  # no temporary


def test_bytes_durable_writes_and_permissions_follow_the_umask(tmp_path):
    target = write_atomic(tmp_path / "blob.bin", b"\x00\x01", durable=True)
    assert target.read_bytes() == b"\x00\x01"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    with atomic_file(tmp_path / "array.npy", "wb", durable=True) as handle:
        np.save(handle, np.arange(3))
    np.testing.assert_array_equal(np.load(tmp_path / "array.npy"), np.arange(3))
    with pytest.raises(ValueError, match="mode"), atomic_file(tmp_path / "x", "a"):
        pass


def test_json_sanitiser_policies():
    value = {
        1: (np.int64(2), np.float64(0.5)),
        "f": Fraction(4, 15),
        "a": np.array([[1, 2]]),
        "bad": [math.nan, np.float64(math.inf)],
    }
    kept = to_jsonable(value)
    assert kept["1"] == [2, 0.5] and kept["f"] == "4/15" and kept["a"] == [[1, 2]]
    assert math.isnan(kept["bad"][0]) and kept["bad"][1] == math.inf
    strict = to_jsonable(value, finite_only=True)
    assert strict["bad"] == [None, None]
    json.dumps(strict, allow_nan=False)  # strict JSON


def test_lru_cache_keeps_the_most_recently_used_within_its_bound():
    from gradcode.lru import LRUCache

    cache: LRUCache[str] = LRUCache(2)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # a is now the most recent
    cache.put("c", "C")
    assert "b" not in cache and cache.get("a") == "A" and len(cache) == 2
    computed = []
    assert cache.get_or_compute("d", lambda: computed.append(1) or "D") == "D"
    assert cache.get_or_compute("d", lambda: computed.append(1) or "X") == "D"
    assert computed == [1]


def test_a_weighted_lru_cache_bounds_the_total_and_never_keeps_an_oversized_entry():
    from gradcode.lru import LRUCache

    cache: LRUCache[bytes] = LRUCache(10, weight=len)
    cache.put(1, b"x" * 6)
    cache.put(2, b"x" * 4)
    assert cache.total == 10
    cache.put(3, b"x" * 5)  # evicts 1 (6 bytes), keeps 2
    assert 1 not in cache and 2 in cache and cache.total == 9
    assert cache.put(4, b"x" * 11) == b"x" * 11 and 4 not in cache


BLAS_PROBE = """
import numpy
from threadpoolctl import threadpool_info
from gradcode.blas import single_threaded_blas

def threads():
    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})

with single_threaded_blas() as limit:
    inside = threads()
print(inside, threads(), limit is None)
"""


@pytest.mark.parametrize(("threads", "expected"), [("2", "[1] [2] False"), ("1", "[1] [1] True")])
def test_single_threaded_blas_limits_inside_and_restores_or_does_nothing_when_already_one(
    threads, expected
):
    env = dict(os.environ) | dict.fromkeys(BLAS_VARIABLES, threads)
    out = subprocess.run(
        [sys.executable, "-c", BLAS_PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == expected
