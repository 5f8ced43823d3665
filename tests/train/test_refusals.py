"""The master's ledger of refused messages (``gradcode.train.refusals``): what one iteration
erases, whom it names and how, what the run's summary keeps."""

from __future__ import annotations

from gradcode.train.intake import MALFORMED, NON_FINITE, Refusal
from gradcode.train.refusals import Refused


def keys_of(refusal: Refusal) -> list[str]:
    if refusal.worker is None:
        return []
    if refusal.key is not None:
        return [f"k{refusal.key}"]
    return [f"k{refusal.worker}a", f"k{refusal.worker}b"]  # both of the worker's messages


def test_an_iteration_erases_what_was_refused_and_names_each_sender_once(capsys):
    ledger = Refused(keys_of, liars=True)
    ledger.start(3)
    refusals = [
        Refusal(2, 1, 3, NON_FINITE, "non-finite payload: 1 NaN", key=7),
        Refusal(3, 2, 3, MALFORMED, "wrong length"),  # no trusted key: all of worker 2's
        Refusal(2, 1, 3, NON_FINITE, "again", key=7),
    ]
    assert ledger.take(refusals, ignored=lambda r: False)
    assert set(ledger.erased) == {"k7", "k2a", "k2b"}
    assert ledger.workers() == [1, 2]
    # the decoder is given finite zeros in their places, never the refused bytes
    assert all(v.shape == (4,) and not v.any() for v in ledger.placeholders(4).values())
    records = ledger.fields()["refused"]
    assert [(r["worker"], r["kind"], r["as"]) for r in records] == [
        (1, NON_FINITE, "liar"),
        (2, MALFORMED, "liar"),
        (1, NON_FINITE, "liar"),
    ]
    told = capsys.readouterr().err.splitlines()
    assert len(told) == 2 and "worker 1 (channel rank 2) refused as a liar" in told[0]
    ledger.start(4)
    assert ledger.erased == {} and ledger.fields() == {} and ledger.workers() == []
    assert len(ledger.history) == 3  # the summary keeps every one


def test_a_run_without_adversaries_names_a_failed_worker_and_ignores_dropped_liars():
    ledger = Refused(keys_of, liars=False)
    ledger.start(0)
    dropped = Refusal(5, 4, 0, MALFORMED, "from a dropped liar", key=1)
    fresh = Refusal(1, 0, 0, MALFORMED, "wrong length", key=0)
    assert ledger.take([dropped, fresh], ignored=lambda r: r.source == 5)
    assert ledger.history == [fresh.as_dict() | {"as": "failed"}]
    assert "worker 0's message refused (wrong length)" in ledger.reason()


def test_a_later_iterations_refusal_is_named_but_erases_nothing_now():
    ledger = Refused(keys_of, liars=True)
    ledger.start(2)
    early = Refusal(1, 0, 3, NON_FINITE, "non-finite payload", key=0)
    assert not ledger.take([early], ignored=lambda r: False)
    assert ledger.erased == {} and len(ledger.history) == 1
