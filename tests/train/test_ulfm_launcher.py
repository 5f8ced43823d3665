"""``python -m gradcode.train.ulfm``: when its ranks may oversubscribe the cores."""

from __future__ import annotations

from gradcode.train.ulfm import oversubscribe


def test_ranks_oversubscribe_one_node_but_follow_a_multi_node_allocation():
    assert oversubscribe(False, {})
    assert oversubscribe(False, {"SLURM_JOB_NUM_NODES": "1"})
    # --oversubscribe in a 5-node allocation put every rank on the first node
    assert not oversubscribe(False, {"SLURM_JOB_NUM_NODES": "5"})
    assert not oversubscribe(False, {"SLURM_NNODES": "2"})
    assert not oversubscribe(True, {})
