"""A plug-in distribution made on the fly: a package and its ``.dist-info`` on a folder that
tests put on ``sys.path`` (in-process) or ``PYTHONPATH`` (subprocesses), so that
``importlib.metadata`` finds its entry points exactly as it finds an installed package's."""

from __future__ import annotations

from pathlib import Path

CODES = '''
from gradcode.codes import LinearCode
from gradcode.codes.base import check_int
import numpy as np


class ToyReplica(LinearCode):
    """Every worker holds every partition and sends the full sum (s = n - 1)."""

    name = "toy-replica"

    def __init__(self, n):
        self.n = check_int("n", self.name, n, minimum=1)
        self.k, self.s, self.a, self.m = self.n, self.n - 1, 0, 1
        self._init_linear(np.ones((self.n, self.n, 1)))

    @classmethod
    def parameter_grid(cls, max_n):
        for n in range(1, max_n + 1):
            yield {"n": n}

    def params(self):
        return {"n": self.n}

    def partitions(self, worker):
        return tuple(range(self.n))


class Clash(ToyReplica):
    name = "crc"


class NotACode:
    name = "not-a-code"


class BadSignature(ToyReplica):
    name = "bad-signature"

    def __init__(self, n, /):
        super().__init__(n)


class Misnamed(ToyReplica):
    name = "something-else"
'''

TIMING = '''
from gradcode.timing import MasterWorkerModel


class ToyModel(MasterWorkerModel):
    """The master-worker model under another name."""

    name = "toy-model"
'''

ATTACKS = '''"""Attacks of the fake distribution."""

import numpy as np

from gradcode.attacks import Attack


class Zero(Attack):
    """Sends zeros, needing three honest messages to do so (an omniscient toy)."""

    name = "toy-zero"
    omniscient = True
    min_honest = 3

    def forge(self, own, honest, rng):
        return np.zeros_like(own)


class Clash(Zero):
    name = "noise"
'''

AGGREGATORS = '''"""Aggregators of the fake distribution."""

import numpy as np

from gradcode.aggregators import Aggregate, Aggregator


class FirstOf(Aggregator):
    """Takes the first input (tolerates none): a toy that still declares what it needs."""

    name = "toy-first"

    def tolerates(self, n):
        return 0

    def refusal(self, n):
        return None if n >= 2 else f"aggregator {self.name} needs n >= 2 (got n={n})"

    def error_bound(self, honest, n):
        return float(np.abs(honest - honest.mean(axis=0)).max())

    def _aggregate(self, inputs):
        return Aggregate(inputs[0].copy(), selected=(0,))


class Clash(FirstOf):
    name = "median"
'''

MODELS = '''"""Models of the fake distribution."""

import numpy as np

from gradcode.models import LinearRegression


class Doubled(LinearRegression):
    """Linear regression with its loss doubled, starting from ones."""

    kind = "toy-doubled"

    def partial_gradient(self, X, y, theta):
        return 2.0 * super().partial_gradient(X, y, theta)

    def losses(self, X, y, theta):
        return 2.0 * super().losses(X, y, theta)

    def initial_parameters(self, features, seed):
        return np.ones(self.parameter_count(features))


class NoTask(Doubled):
    kind = "toy-no-task"
    task = "ranking"


class Clash(Doubled):
    kind = "logistic"
'''

ENTRY_POINTS = """\
[gradcode.codes]
toy-replica = fakeplug.codes:ToyReplica
crc = fakeplug.codes:Clash
broken-import = fakeplug.missing:Nothing
not-a-code = fakeplug.codes:NotACode
bad-signature = fakeplug.codes:BadSignature
misnamed = fakeplug.codes:Misnamed

[gradcode.timing_models]
toy-model = fakeplug.timing:ToyModel
broken-model = fakeplug.missing:Nothing

[gradcode.attacks]
toy-zero = fakeplug.attacks:Zero
noise = fakeplug.attacks:Clash

[gradcode.aggregators]
toy-first = fakeplug.aggregators:FirstOf
median = fakeplug.aggregators:Clash

[gradcode.models]
toy-doubled = fakeplug.models:Doubled
toy-no-task = fakeplug.models:NoTask
logistic = fakeplug.models:Clash
"""

#: plug-in names that must be refused, with a fragment of the reason each gets
REFUSED = {
    "crc": "the name is a built-in's",
    "broken-import": "import failed: ModuleNotFoundError",
    "not-a-code": "is not a GradientCode subclass",
    "bad-signature": "positional-only",
    "misnamed": "is named 'something-else', not 'misnamed'",
}


def make_distribution(root: Path) -> Path:
    """Write the ``fakeplug 0.1`` distribution below ``root``; returns the folder to put on the
    path."""
    package = root / "fakeplug"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "codes.py").write_text(CODES)
    (package / "timing.py").write_text(TIMING)
    (package / "attacks.py").write_text(ATTACKS)
    (package / "aggregators.py").write_text(AGGREGATORS)
    (package / "models.py").write_text(MODELS)
    info = root / "fakeplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root
