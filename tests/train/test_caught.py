"""``adversaries.caught`` and ``adversaries.unforeseen`` before the run (the run file, the
plan, ``gradcode train check``), the master's checks of the liars a decoder names, and what
DRACO's vote detects beyond ``a`` liars and what it cannot (MPI runs: ``test_caught_mpi``)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.attacks import AttackPlan
from gradcode.cli import CLIError
from gradcode.codes import NotDecodableError, build
from gradcode.errors import UserError
from gradcode.runfile.config import parse_config
from gradcode.runfile.plan import build_plan
from gradcode.train.faults.caught import LIAR_REASON, Caught, DecodingFailed
from tests.helpers.mpi import base_run, write_run
from tests.train.test_cli import invoke

REPETITION = {"name": "draco-repetition", "params": {"n": 4, "a": 1, "s": 1}}


def _run(**overrides):
    run = {
        "iterations": 3,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": REPETITION,
        "optimizer": {"step": 0.5},
    }
    return run | overrides


def test_the_policy_defaults_to_keep_and_leaves_the_fingerprints_as_they_were():
    """The fingerprints below are main's before ``caught`` existed (checkpoints resume)."""
    new_form = {"workers": [1], "attack": "reversed", "params": {"scale": 100.0}}
    new_form["iterations"] = {"start": 2}
    before = {
        None: "ccf6aaec40ed0af83f57a990578779d0431b196d1286bb5edfc3ff14efe49204",
        "old": "942fbf7aae67d5df6acd3ac8986f02184c8eda181ff61ae3f705900781f2892b",
        "new": "324aff4e73bfbe77f04b08e2125c2f51d4daeedd01df7b353b2cbfcef5eb56dc",
    }
    blocks = {None: None, "old": {"workers": [1], "scale": 10.0}, "new": new_form}
    for label, block in blocks.items():
        config = parse_config(_run() if block is None else _run(adversaries=block))
        assert config.adversaries.caught == "keep" and config.adversaries.unforeseen == ()
        assert config.fingerprint() == before[label]
        if block is not None:
            dropping = parse_config(_run(adversaries=block | {"caught": "drop"}))
            assert dropping.fingerprint() == before[label]
            assert dropping.adversaries.plan() == config.adversaries.plan()
    unforeseen = parse_config(_run(adversaries=new_form | {"unforeseen": [2]}))
    assert unforeseen.fingerprint() != before["new"]
    assert unforeseen.adversaries.plan().workers == (1, 2)


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (
            _run(adversaries={"workers": [1], "caught": "leave"}),
            "adversaries.caught: must be one of keep, drop (got 'leave')",
        ),
        (
            _run(adversaries={"workers": [1], "unforeseen": [1]}),
            "adversaries.unforeseen: worker 1 is also in adversaries.workers",
        ),
        (
            _run(adversaries={"workers": [1], "unforeseen": [4]}),
            "adversaries.unforeseen: worker 4 does not exist (workers are 0..3)",
        ),
        (
            # dropping the liar leaves two of the group of four: the vote needs three
            _run(adversaries={"workers": [1], "caught": "drop"}, stragglers={"persistent": [3]}),
            "adversaries.caught: drop would leave draco-repetition {'n': 4, 'a': 1, 's': 1} "
            "unable to decode without workers [1, 3]",
        ),
        (
            _run(
                scheme={"name": "draco-repetition", "params": {"n": 3, "a": 1}},
                adversaries={"workers": [0], "caught": "drop"},
            ),
            "adversaries.caught: drop would leave draco-repetition {'n': 3, 'a': 1, 's': 0} "
            "unable to decode without workers [0]",
        ),
        (
            _run(
                scheme={"name": "uncoded", "params": {"n": 5}},
                aggregator={"name": "median"},
                adversaries={"workers": [0], "caught": "drop"},
            ),
            "adversaries.caught: needs a code that names the liars it corrects",
        ),
        (
            _run(
                scheme={"name": "frc", "params": {"n": 4, "s": 1}},
                adversaries={"caught": "drop"},
            ),
            "adversaries.caught: needs a code that names the liars it corrects",
        ),
        (
            _run(adversaries={"workers": [0], "unforeseen": [3]}, stragglers={"persistent": [3]}),
            "adversaries.unforeseen: worker 3 is also a persistent straggler",
        ),
        (
            # the plan counts only the workers it is told of against a
            _run(adversaries={"workers": [0, 1], "unforeseen": [2]}),
            "adversaries.workers: 2 adversaries but the code corrects a = 1",
        ),
    ],
)
def test_bad_policies_are_refused_before_the_run_in_one_line(run, expected):
    with pytest.raises(UserError) as caught:
        build_plan(parse_config(run))
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_the_plan_accepts_what_the_code_survives():
    # one liar dropped from a group of four leaves three: the vote's 2a + 1
    build_plan(parse_config(_run(adversaries={"workers": [1], "caught": "drop"})))
    # a spare takes the liar's place: even with a persistent straggler
    spare = {"persistent": [3]}
    build_plan(
        parse_config(
            _run(
                adversaries={"workers": [1], "caught": "drop"},
                stragglers=spare,
                faults={"spares": 1},
            )
        )
    )
    # the unforeseen liar is not counted against a = 1
    build_plan(parse_config(_run(adversaries={"workers": [1], "unforeseen": [2]})))


def test_train_check_refuses_a_drop_the_code_cannot_survive(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "draco-repetition", "params": {"n": 3, "a": 1}},
        adversaries={"workers": [2], "caught": "drop"},
    )
    with pytest.raises(CLIError, match=r"^adversaries.caught: drop would leave draco-repetition"):
        invoke(["train", "check", str(write_run(tmp_path / "drop.yaml", run))])
    more = base_run(
        logistic_data,
        scheme={"name": "draco-cyclic", "params": {"n": 5, "a": 1}},
        adversaries={"workers": [0, 3]},
    )
    with pytest.raises(CLIError, match=r"^adversaries.workers: 2 adversaries but the code corr"):
        invoke(["train", "check", str(write_run(tmp_path / "more.yaml", more))])


def test_the_master_refuses_more_named_than_a_and_an_honest_worker_named():
    caught = Caught(1, AttackPlan((1, 2), "noise", {}, start=3), "drop")
    caught.check(3, [1])
    caught.check(3, [])
    with pytest.raises(DecodingFailed, match=r"named workers \[1, 2\] as liars, more than"):
        caught.check(3, [1, 2])
    with pytest.raises(DecodingFailed, match="named worker 0 as a liar, which did not lie"):
        caught.check(3, [0])
    with pytest.raises(DecodingFailed, match="named worker 1 as a liar, which did not lie"):
        caught.check(2, [1])  # before the schedule's start, worker 1 was honest
    assert caught.drop(3, [1], {0: 1, 1: 2, 2: 3}) and caught.ranks() == {2}
    assert caught.fields() == {
        "dropped_workers": [1],
        "dropped": [{"worker": 1, "rank": 2, "iteration": 3, "reason": LIAR_REASON}],
    }
    assert caught.fields() == {"dropped_workers": [1]}
    assert Caught(1, AttackPlan((1,)), "keep").drop(3, [1], {1: 2}) == []


def _repetition_messages(code, partials, forged: dict[int, np.ndarray]):
    honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}
    return honest | forged


def test_the_vote_detects_rival_majorities_and_more_than_a_outvoted():
    rng = np.random.default_rng(0)
    code = build("draco-repetition", n=4, a=1, s=1)  # one group of four, a + 1 = 2 decide
    partials = rng.standard_normal((4, 7))
    fake = rng.standard_normal(7)
    # two colluding liars beside two honest workers: two values with a + 1 senders each
    with pytest.raises(NotDecodableError, match="different values with a \\+ 1 = 2 senders"):
        code.decode_result(_repetition_messages(code, partials, {1: fake, 2: fake}), 7)
    # two liars that disagree: the honest value wins, but two outvoted is more than a = 1
    messages = _repetition_messages(code, partials, {1: fake, 2: 2 * fake})
    with pytest.raises(NotDecodableError, match=r"workers \[1, 2\] are outvoted") as error:
        code.decode_result(messages, 7)
    assert error.value.needed is None
    # each group right, one liar in each of two groups: still more than a in all
    two = build("draco-repetition", n=6, a=1)
    partials = rng.standard_normal((6, 7))
    with pytest.raises(NotDecodableError, match=r"workers \[0, 4\] are outvoted"):
        two.decode_result(_repetition_messages(two, partials, {0: fake, 4: fake}), 7)


def test_a_plus_one_colluding_liars_outvote_a_group_of_2a_plus_1_silently():
    """The bound of every repetition code, documented in its docstring: nothing in the
    messages tells two agreeing liars of three from one honest pair and a liar. The decoder
    names the honest worker; only a run that knows who lies can tell (``Caught.check``)."""
    rng = np.random.default_rng(1)
    code = build("draco-repetition", n=3, a=1)
    partials = rng.standard_normal((3, 5))
    fake = rng.standard_normal(5)
    result = code.decode_result(_repetition_messages(code, partials, {0: fake, 1: fake}), 5)
    assert np.allclose(result.gradient, fake) and not np.allclose(result.gradient, partials.sum(0))
    assert result.adversaries == (2,)
    with pytest.raises(DecodingFailed, match="named worker 2 as a liar, which did not lie"):
        Caught(code.a, AttackPlan((0, 1)), "keep").check(0, [2])
