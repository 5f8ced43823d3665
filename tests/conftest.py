"""The suite's one collection rule: a test is marked ``serial`` in its own file's text.

``tests/run`` starts the serial session on the files that say ``pytest.mark.serial`` (grep),
not on the whole suite, whose collection costs the serial session, which runs alone, seconds
of wall time; the parallel session deselects serial tests everywhere. A serial mark that a
file's text does not show (a hook's ``add_marker``, a mark built by name) would so run in
neither session: collection fails on it instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: what ``tests/run`` greps for
SERIAL_MARK = "pytest.mark.serial"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    hidden = sorted(
        {
            str(item.path)
            for item in items
            if item.get_closest_marker("serial") is not None
            and SERIAL_MARK not in Path(item.path).read_text()
        }
    )
    if hidden:
        raise pytest.UsageError(
            f"{hidden[0]}: a test marked serial where the file's text does not say "
            f"{SERIAL_MARK}: tests/run's serial session would not find it"
        )
