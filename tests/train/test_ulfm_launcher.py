"""``python -m gradcode.launch.ulfm``: when its ranks may oversubscribe the cores."""

from __future__ import annotations

import pytest

from gradcode.launch.ulfm import AllocationError, allocation_environment, oversubscribe


def test_ranks_oversubscribe_one_node_but_follow_a_multi_node_allocation():
    assert oversubscribe(False, {})
    assert oversubscribe(False, {"SLURM_JOB_NUM_NODES": "1"})
    # --oversubscribe in a 5-node allocation put every rank on the first node
    assert not oversubscribe(False, {"SLURM_JOB_NUM_NODES": "5"})
    assert not oversubscribe(False, {"SLURM_NNODES": "2"})
    assert not oversubscribe(True, {})


SHOW_JOB = """JobId=29 JobName=train_faults
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   JobState=RUNNING Reason=None Dependency=(null)
   NodeList=gc-node[0-4]
   BatchHost=gc-node0
   NumNodes=5 NumCPUs=10 NumTasks=10 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
"""


def test_an_allocation_stripped_from_the_environment_is_asked_of_slurm():
    # Snakemake's job-step executor keeps SLURM_JOB_ID only; Open MPI needs the node list
    asked = []
    env = allocation_environment({"SLURM_JOB_ID": "29"}, lambda job: asked.append(job) or SHOW_JOB)
    assert asked == ["29"]
    assert env == {
        "SLURM_NODELIST": "gc-node[0-4]",
        "SLURM_TASKS_PER_NODE": "2(x5)",
        "SLURM_JOB_NUM_NODES": "5",
    }
    assert not oversubscribe(False, env)
    single = SHOW_JOB.replace("gc-node[0-4]", "vm").replace("NumNodes=5", "NumNodes=1")
    assert (
        allocation_environment({"SLURM_JOB_ID": "3"}, lambda job: single)["SLURM_TASKS_PER_NODE"]
        == "10"
    )
    # outside SLURM, or with the variables in place, SLURM is not asked
    whole = {"SLURM_JOB_ID": "3", "SLURM_NODELIST": "vm", "SLURM_TASKS_PER_NODE": "5"}
    assert allocation_environment({}, None) == allocation_environment(whole, None) == {}


def test_an_uneven_allocation_is_an_error_not_a_guess():
    uneven = SHOW_JOB.replace("NumTasks=10", "NumTasks=7")
    with pytest.raises(AllocationError, match="7 tasks on 5 nodes are not spread evenly"):
        allocation_environment({"SLURM_JOB_ID": "29"}, lambda job: uneven)
