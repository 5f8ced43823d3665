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

#: fields of a result message's header, in order (all float64)
HEADER = (
    "iteration",  # t of the model the message was computed from
    "key",  # index of the message key in code.all_message_keys() (tree: the sender's node)
    "worker",  # the sending worker (code index)
    "compute",  # measured seconds of computation (partials + encoding) behind this message
    "injected_compute",  # seconds of injected compute delay behind this message
    "injected_comm",  # seconds of injected link delay of this message
    "started",  # sender's clock when it began the iteration (received the model)
    "sent",  # sender's clock when the message left (same host: comparable with the master's)
    "corrupted",  # 1.0 when an adversary corrupted the payload (for the log only)
    "model_last",  # scatter: the chunk that completed the sender's model (-1: none, isend)
    "model_wait",  # scatter: seconds the sender held every chunk but that one
    "model_span",  # scatter: seconds from its first chunk to the one before the last
)
H = len(HEADER)
FIELD = {name: index for index, name in enumerate(HEADER)}


def result_tag(iteration: int) -> int:
    return RESULT_BASE + iteration % TAG_WRAP


def tag_iteration_matches(tag: int, iteration: int) -> bool:
    """Whether a result tag can belong to ``iteration`` (cheap test before the header)."""
    return tag >= RESULT_BASE and (tag - RESULT_BASE) == iteration % TAG_WRAP


def clock() -> float:
    """Seconds on the monotonic clock (``time.perf_counter``: one clock per host on Linux),
    divided by the run's dilation factor (``gradcode.dilation``: virtual seconds)."""
    return dilation.clock()
