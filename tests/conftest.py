"""The suite's one collection rule: a test is marked ``serial`` or ``one_cluster`` in its own
file's text.

``tests/run`` starts the serial session, and the one-cluster session, on the files that say
``pytest.mark.serial`` (``pytest.mark.one_cluster``) (grep), not on the whole suite, whose
collection costs the serial session, which runs alone, seconds of wall time; the parallel
session deselects both marks everywhere. Such a mark that a file's text does not show (a
hook's ``add_marker``, a mark built by name) would so run in no session: collection fails on
it instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: what ``tests/run`` greps for, by mark
SESSION_MARKS = {"serial": "pytest.mark.serial", "one_cluster": "pytest.mark.one_cluster"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    texts: dict[Path, str] = {}
    for name, text in SESSION_MARKS.items():
        hidden = sorted(
            {
                str(item.path)
                for item in items
                if item.get_closest_marker(name) is not None
                and text not in texts.setdefault(item.path, Path(item.path).read_text())
            }
        )
        if hidden:
            raise pytest.UsageError(
                f"{hidden[0]}: a test marked {name} where the file's text does not say "
                f"{text}: tests/run's {name} session would not find it"
            )
