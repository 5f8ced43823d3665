"""Which data set a run trains on: the real one, or its labelled stand-in.

The real Amazon, CIFAR-10 and GISETTE files are not in the repository
(``gradcode.data.location``). When a run asks for one whose raw files are absent, it trains on
the stand-in of the same shape, which every figure and comparison row then labels STAND-IN;
``data.stand_ins: never`` in the config makes that an error instead.
"""

from __future__ import annotations

import functools

from gradcode.data import DATASETS
from gradcode.data.errors import DataError, OptionError
from gradcode.data.location import describe_raw_dir, raw_dirs
from gradcode.data.prepare import find_inputs

#: real data set -> its labelled stand-in
STAND_INS = {
    "amazon": "amazon-standin",
    "cifar10": "cifar10-standin",
    "gisette": "gisette-standin",
}
POLICIES = ("auto", "never")


@functools.cache  # asked once per job; the files do not change during a workflow run
def raw_files_present(dataset: str, variant: str) -> bool:
    """Whether ``variant`` of ``dataset`` can be prepared from the files in place."""
    spec = DATASETS[dataset]
    if not spec.variants[variant]:
        return True  # made from nothing: synthetic, stand-ins
    folders = raw_dirs(dataset)
    if not folders:
        return False
    try:
        find_inputs(spec, variant, folders)
    except (DataError, OptionError):
        return False
    return True


def resolve_data(dataset: str, variant: str | None, policy: str) -> tuple[str, str]:
    """``(dataset, variant)`` the workflow prepares for a run asking for ``dataset``."""
    variant = variant or DATASETS[dataset].default_variant
    if raw_files_present(dataset, variant):
        return dataset, variant
    if policy == "never" or dataset not in STAND_INS:
        raise ValueError(
            f"config data.stand_ins={policy}: the raw files of {dataset} ({variant}) are not "
            f"in {describe_raw_dir(dataset)} and no stand-in may replace them"
        )
    stand_in = STAND_INS[dataset]
    if variant not in DATASETS[stand_in].variants:
        raise ValueError(f"{stand_in} has no variant {variant!r} to stand in for {dataset}")
    return stand_in, variant
