"""What travels between ranks: tags, message layouts, and the clock every rank uses.

Every numeric message is a float64 vector with a fixed header, so a receiver can recognise a
late message by its tag and header alone, without trusting its payload:

=========================  =====================================================================
``MODEL`` (parent->child)  ``[t, ...point (p)]``: evaluate the gradient at ``point`` for
                           iteration ``t``
result (child->parent)     tag ``RESULT_BASE + t mod TAG_WRAP``; header ``HEADER`` fields, then
                           the message (``ceil(l / m)`` floats)
``STOP`` (master->all)     stop working, flush sends, answer ``DONE``
``DONE`` (all->master)     ``[stale discarded, messages sent]``: every send of the rank completed
``FINISH`` (master->all)   leave (every rank keeps draining its receives until then)
``REPORT`` (ring->master)  a ring worker's timings of one iteration (worker 0 adds the gradient)
``ASSIGN`` (master->spare) pickled ``{worker, parts}``: take the dead worker's place
``READY`` (spare->master)  ``[]``: the data is loaded, the spare listens for models
``MODEL_CHUNK`` (any->wkr)  ``[t, j, forward, ...chunk j of point]``: ``runtime.distribution``
                           ``scatter`` (``gradcode.train.distribution``)
``PULL`` (master->worker)  ``[t, key]``: send the held message ``key`` of iteration ``t``
                           (``runtime.collection`` ``pull``, ``gradcode.runfile.collection``);
                           under ``pull`` a result without payload (header only) is the
                           notice that the message is ready
=========================  =====================================================================

The iteration is in the tag (modulo ``TAG_WRAP``, so tags stay below MPI's guaranteed-valid
upper bound scaled by what MPICH allows) *and* exactly in the header; the header decides.
"""

from __future__ import annotations

from gradcode import dilation

# the result messages' header is the wire format's too; its home is below the rank program,
# where the readers of finished runs take its length from
from gradcode.message_header import FIELD as FIELD
from gradcode.message_header import HEADER as HEADER
from gradcode.message_header import H as H

MODEL = 1
STOP = 2
DONE = 3
FINISH = 4
REPORT = 5
ASSIGN = 6
READY = 7
MODEL_CHUNK = 8
PULL = 9
RESULT_BASE = 16
#: iterations are folded into tags modulo this (tags stay below 2^20 + 16; MPICH allows 2^29)
TAG_WRAP = 1 << 20


def result_tag(iteration: int) -> int:
    return RESULT_BASE + iteration % TAG_WRAP


def tag_iteration_matches(tag: int, iteration: int) -> bool:
    """Whether a result tag can belong to ``iteration`` (cheap test before the header)."""
    return tag >= RESULT_BASE and (tag - RESULT_BASE) == iteration % TAG_WRAP


def clock() -> float:
    """Seconds on the monotonic clock (``time.perf_counter``: one clock per host on Linux),
    divided by the run's dilation factor (``gradcode.dilation``: virtual seconds)."""
    return dilation.clock()
