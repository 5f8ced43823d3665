import warnings

import pytest

from gradcode import timing
from gradcode.aggregators import registry as aggregator_registry
from gradcode.attacks import registry as attack_registry
from gradcode.codes import registry
from gradcode.models import registry as model_registry
from tests.helpers.plugins import make_distribution


def _forget_plugins():
    registry.PLUGINS.reset()
    timing.PLUGINS.reset()
    attack_registry.PLUGINS.reset()
    aggregator_registry.PLUGINS.reset()
    model_registry.PLUGINS.reset()


@pytest.fixture
def fakeplug(tmp_path, monkeypatch):
    """The ``fakeplug`` distribution on ``sys.path``, plug-ins rediscovered; its folder.

    Discovery warns once per refused plug-in; the warnings are recorded, not shown.
    """
    site = make_distribution(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    _forget_plugins()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.available()
        timing.timing_models()
    yield site, [str(w.message) for w in caught]
    monkeypatch.undo()
    _forget_plugins()
