"""What a run reads of the emulated cluster that is up: only a process on one of its nodes
(in a node's network namespace) is on its links; a run on the host beside it records no
cluster and is not refused for the cluster's dilation (CI's parallel session runs such runs
while the multi-node smoke's cluster is up)."""

from __future__ import annotations

import pytest

from gradcode.livecluster import files, links
from gradcode.rate import Rate
from tests.helpers.cluster import as_if_on_node, state_of_a_cluster_up


@pytest.fixture
def cluster_up(tmp_path, monkeypatch):
    """A dilated 3-node cluster's state file (nothing is made); ``here(name)`` makes this
    process count as on node ``name`` (a name not the cluster's: on the host)."""
    state_of_a_cluster_up(
        monkeypatch, tmp_path / "run", {"nodes": 3, "rate": "100mbit", "dilation": 4}
    )
    return lambda name: as_if_on_node(monkeypatch, tmp_path / "netns", name)


def test_a_process_on_the_host_is_not_on_the_cluster_that_is_up(cluster_up):
    cluster_up("some-other-namespace")
    assert not files.in_namespace_of(["gc-node0", "gc-node1"])
    assert links.links_record() is None
    assert links.dilation_mismatch(1) is None
    assert links.stated_links_mismatch(Rate.from_bits(8e8), Rate.from_bits(8e8)) is None
    # a launcher on the host asks of the cluster that is up all the same
    mismatch = links.stated_links_mismatch(Rate.from_bits(8e8), Rate.from_bits(8e8), anywhere=True)
    assert mismatch is not None and "800mbit" in mismatch


def test_a_process_on_a_node_reads_its_links_and_dilation(cluster_up):
    cluster_up("gc-node1")
    assert files.in_namespace_of(["gc-node0", "gc-node1"])
    record = links.links_record()
    assert record is not None and record["dilation"] == 4
    assert [node["name"] for node in record["nodes"]] == ["gc-node0", "gc-node1", "gc-node2"]
    assert "--dilation 4" in links.dilation_mismatch(1)
    assert links.dilation_mismatch(4) is None
