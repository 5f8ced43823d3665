"""The result port's handling of iterations: late results are stale, early ones wait for
their iteration (a tree child that assembled a scattered model before its parent did)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# one MPI process sending to itself: the port's receives are real MPI receives
SCRIPT = """
import numpy as np
from mpi4py import MPI

from gradcode.train import protocol
from gradcode.runfile.bandwidth import SinglePort
from gradcode.train.protocol import FIELD, H
from gradcode.train.transport import ResultPort

comm = MPI.COMM_SELF.Dup()
port = ResultPort(comm, [0], 3, SinglePort(None, 3))


# a result for iteration, and what the port returns after it (a message to oneself
# completes only once it is received: poll until it is)
def send(iteration, value):
    message = np.zeros(H + 3)
    message[FIELD["iteration"]], message[FIELD["key"]], message[H:] = iteration, 0, value
    request = comm.Isend([message, MPI.DOUBLE], dest=0, tag=protocol.result_tag(iteration))
    got = []
    while not request.Test():
        got += poll()
    return got + poll()


def poll():
    return [(r.iteration, float(r.data[0])) for r in port.poll(1e9)]


port.start(2, 0.0)
assert send(1, 1.0) == [] and port.stale == 1  # late
assert send(3, 3.0) == []  # early
assert send(4, 4.0) == []  # earlier still
assert port.stale == 1 and port.received == 0
port.start(3, 1.0)
assert poll() == [(3, 3.0)]
assert port.stale == 1 and port.received == 1
port.start(5, 2.0)  # iteration 4's result waited in vain: stale
assert poll() == [] and port.stale == 2
assert send(5, 5.0) == [(5, 5.0)]
port.close()
print("ok")
"""


@pytest.mark.mpi
def test_results_of_an_iteration_not_begun_wait_for_it_and_late_ones_are_stale():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


# ``wait`` naps until a result completes or its timer is due, and leaves the result to ``poll``;
# ``SendSet.pump`` forgets a send once it completed, and only then
WAIT_SCRIPT = """
import time

import numpy as np
from mpi4py import MPI

from gradcode.train import protocol
from gradcode.runfile.bandwidth import SinglePort
from gradcode.train.protocol import FIELD, H, clock
from gradcode.train.transport import ResultPort, SendSet

comm = MPI.COMM_SELF.Dup()
port = ResultPort(comm, [0], 3, SinglePort(None, 3))
port.start(0, clock())

began = clock()
port.wait(began + 0.05, 0.005)  # nothing comes: back at the timer, not before
assert 0.05 <= clock() - began < 0.5, clock() - began
assert port.poll(clock()) == []

message = np.zeros(H + 3)
message[FIELD["iteration"]], message[FIELD["key"]], message[H:] = 0, 0, 7.0
request = comm.Isend([message, MPI.DOUBLE], dest=0, tag=protocol.result_tag(0))
began = clock()
port.wait(began + 30.0, 0.005)  # a result comes: back at once, long before the timer
assert clock() - began < 5.0, clock() - began
request.Wait()
[result] = port.poll(clock())
assert (result.iteration, float(result.data[0])) == (0, 7.0)
port.release(result)

sends, other = SendSet(), MPI.COMM_SELF.Dup()  # the port's receive takes any tag of ``comm``
# 8 MB each: no MPI completes such a send before it is received
pending = [np.full(1 << 20, float(i)) for i in range(2)]
for i, buffer in enumerate(pending):
    sends.send(other, buffer, 0, 100 + i)
got = np.empty(1 << 20)
other.Recv([got, MPI.DOUBLE], source=0, tag=100)
sends.pump()  # one of two received: the other kept
assert sends.pending() == 1
other.Recv([got, MPI.DOUBLE], source=0, tag=101)
deadline = time.monotonic() + 5
while not sends.idle():
    assert time.monotonic() < deadline
assert sends.pending() == 0 and float(got[0]) == 1.0
port.close()
print("ok")
"""


@pytest.mark.mpi
def test_the_port_waits_for_a_result_or_its_timer_and_sends_are_forgotten_once_complete():
    done = subprocess.run(
        [sys.executable, "-c", WAIT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
