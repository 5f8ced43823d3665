"""The data sets ``prepare`` knows: names, variants, inputs, options; builders load lazily."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gradcode.data.errors import OptionError
from gradcode.data.prepared import Built
from gradcode.data.provenance import Published
from gradcode.errors import UnknownNameError

#: largest seed accepted (scikit-learn's random_state limit)
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class Option:
    """A dataset-specific numeric parameter (``rows``, ``noise_std``...)."""

    kind: type  # int or float
    minimum: float
    help: str
    presets_allow: bool  # may be given with a preset variant (else only with "custom")


@dataclass(frozen=True)
class DatasetSpec:
    """What ``prepare(name, ...)`` needs to know about one data set.

    ``variants`` maps each variant to the logical input file names it reads (compression
    suffixes are added when looking for them); the first variant is the default.
    """

    name: str
    summary: str
    builder: str  # "module:function" below gradcode.data
    variants: Mapping[str, tuple[str, ...]]
    variant_help: Mapping[str, str]
    seed_default: int | None  # None: the data set takes no seed
    seed_help: str = ""
    options: Mapping[str, Option] = field(default_factory=dict)
    raw_subdir: str | None = None  # folder of its files under GRADCODE_DATA_DIR
    downloadable: bool = False

    @property
    def default_variant(self) -> str:
        return next(iter(self.variants))

    def load_builder(self) -> Callable[..., Built]:
        module, function = self.builder.split(":")
        return getattr(importlib.import_module(f"gradcode.data.{module}"), function)

    def published(self) -> Mapping[str, Published]:
        module = importlib.import_module(f"gradcode.data.{self.builder.split(':')[0]}")
        return getattr(module, "PUBLISHED", {})

    def check_variant(self, variant: str | None) -> str:
        if variant is None:
            return self.default_variant
        if variant not in self.variants:
            raise OptionError(
                f"{self.name} has no variant {variant!r} (variants: {', '.join(self.variants)})"
            )
        return variant

    def check_seed(self, seed: object) -> int | None:
        if seed is None:
            return self.seed_default
        if self.seed_default is None:
            raise OptionError(f"{self.name} takes no seed (its rows and split are fixed)")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise OptionError(f"seed must be an integer in 0..{MAX_SEED} (got {seed!r})")
        return int(seed)

    def check_options(self, variant: str, options: Mapping[str, Any]) -> dict[str, Any]:
        checked: dict[str, Any] = {}
        for key, value in options.items():
            if key not in self.options:
                takes = ", ".join(self.options) or "none"
                raise OptionError(f"{self.name} has no option {key!r} (options: {takes})")
            option = self.options[key]
            if variant != "custom" and not option.presets_allow:
                raise OptionError(
                    f"{self.name}: option {key!r} needs variant 'custom' (got {variant!r})"
                )
            number = _number(key, value, option.kind)
            if number < option.minimum:
                raise OptionError(f"{self.name}: {key} must be >= {option.minimum:g} (got {value})")
            checked[key] = number
        if variant == "custom":
            missing = [
                k for k, o in self.options.items() if not o.presets_allow and k not in checked
            ]
            if missing:
                raise OptionError(
                    f"{self.name} variant 'custom' needs option(s) {', '.join(missing)}"
                )
        return checked


def _number(key: str, value: object, kind: type) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(f"{key} must be a number (got {value!r})")
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise OptionError(f"{key} must be an integer (got {value!r})")
        return int(value)
    if not math.isfinite(value):
        raise OptionError(f"{key} must be finite (got {value!r})")
    return float(value)


_ROWS = Option(int, 1, "training rows d", False)
_FEATURES = Option(int, 1, "features p", False)
_TEST_ROWS = Option(int, 0, "test rows", True)

_GISETTE_UCI = (
    "gisette_train.data",
    "gisette_train.labels",
    "gisette_valid.data",
    "gisette_valid.labels",
    "gisette.param",
)

_CIFAR10 = (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch", "batches.meta")
_IMAGES = Option(int, 1, "training images (a seeded random subset)", False)
_TEST_IMAGES = Option(int, 1, "test images (a seeded random subset; default all)", True)

DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            name="amazon",
            summary="Amazon Employee Access (Kaggle): one-hot with interactions, 80/20 split",
            builder="amazon:build",
            variants={
                "tandon": ("train.csv",),
                "tandon-all-pairs": ("train.csv",),
                "tandon-kaggle-vocab": ("train.csv", "test.csv"),
                "first-order": ("train.csv",),
            },
            variant_help={
                "tandon": "Tandon et al.'s recipe: 241,915 features, 26,215 / 6,554 rows",
                "tandon-all-pairs": "all 36 interaction pairs: 242,445 features",
                "tandon-kaggle-vocab": "categories also from Kaggle's test.csv: 372,083",
                "first-order": "no interactions: 15,627 features",
            },
            seed_default=0,
            seed_help="random_state of the 80/20 train_test_split (Tandon et al.: 0)",
            raw_subdir="amazon",
            downloadable=True,
        ),
        DatasetSpec(
            name="amazon-standin",
            summary="STAND-IN, NOT AMAZON: synthetic table of Amazon's shape, amazon's encoding",
            builder="amazon_standin:build",
            variants={"tandon": (), "tandon-all-pairs": (), "first-order": ()},
            variant_help={
                "tandon": "as amazon tandon: 26,215 / 6,554 rows, 251,448 features (real 241,915)",
                "tandon-all-pairs": "all 36 interaction pairs",
                "first-order": "no interactions: 15,627 features",
            },
            seed_default=0,
            seed_help="seed of numpy.random.default_rng and random_state of the 80/20 split",
        ),
        DatasetSpec(
            name="gisette",
            summary="GISETTE (UCI 170): 5000 features + bias, checked against gisette.param",
            builder="gisette:build",
            variants={
                "uci": _GISETTE_UCI,
                "paper001": _GISETTE_UCI,
                "libsvm": ("gisette_scale", "gisette_scale.t"),
            },
            variant_help={
                "uci": "train 6000 / test 1000 (the validation file)",
                "paper001": "train = first 6552 of train+valid (paper 001's d), test 448",
                "libsvm": "LIBSVM gisette_scale / gisette_scale.t, scaled to [-1, 1]",
            },
            seed_default=None,
            raw_subdir="gisette",
            downloadable=True,
        ),
        DatasetSpec(
            name="gisette-standin",
            summary="STAND-IN, NOT GISETTE: synthetic data of GISETTE's shape for offline runs",
            builder="gisette_standin:build",
            variants={"uci": (), "paper001": ()},
            variant_help={
                "uci": "6000 + 1000 rows x 5001",
                "paper001": "6552 + 448 rows x 5001",
            },
            seed_default=0,
            seed_help="seed of numpy.random.default_rng",
        ),
        DatasetSpec(
            name="cifar10",
            summary="CIFAR-10 python batches: 3x32x32 images / 255, 10 classes (multiclass)",
            builder="cifar10:build",
            variants={
                "full": _CIFAR10,
                "paper001": _CIFAR10,
                "custom": _CIFAR10,
                "small": _CIFAR10,
            },
            variant_help={
                "full": "50,000 training + 10,000 test images",
                "paper001": "a seeded random 49,920 training images (paper 001's d), all test",
                "custom": "a seeded random --rows training images",
                "small": "a seeded class-balanced 1,260 training + 500 test images",
            },
            seed_default=0,
            seed_help="seed of the random subsets (numpy.random.default_rng)",
            options={"rows": _IMAGES, "test_rows": _TEST_IMAGES},
            raw_subdir="cifar-10-batches-py",
        ),
        DatasetSpec(
            name="cifar10-standin",
            summary="STAND-IN, NOT CIFAR-10: synthetic 3x32x32 images of 10 classes",
            builder="cifar10_standin:build",
            variants={"full": (), "paper001": (), "custom": (), "small": ()},
            variant_help={
                "full": "50,000 + 10,000 images",
                "paper001": "49,920 + 10,000 images",
                "custom": "--rows training images",
                "small": "1,260 + 500 images, 126 + 50 per class (as cifar10 small)",
            },
            seed_default=0,
            seed_help="seed of numpy.random.default_rng",
            options={"rows": _IMAGES, "test_rows": _TEST_IMAGES},
        ),
        DatasetSpec(
            name="synthetic-linear",
            summary="paper 001 eq. (10): x ~ N(0, I), y = x . theta* + z; theta* saved",
            builder="synthetic:build_linear",
            variants={
                "d7644-p6500": (),
                "d32760-p5000": (),
                "d1911-p1625": (),
                "d8190-p1250": (),
                "custom": (),
            },
            variant_help={
                "d7644-p6500": "d = 7644 rows, p = 6500 (paper 001, Figs. 10, 11)",
                "d32760-p5000": "d = 32760 rows, p = 5000 (paper 001, Fig. 12)",
                "d1911-p1625": "a quarter of d7644-p6500 each way (reduced-scale runs)",
                "d8190-p1250": "a quarter of d32760-p5000 each way (reduced-scale runs)",
                "custom": "d = --rows, p = --features",
            },
            seed_default=0,
            seed_help="seed of numpy.random.default_rng",
            options={
                "rows": _ROWS,
                "features": _FEATURES,
                "test_rows": _TEST_ROWS,
                "noise_std": Option(float, 0.0, "standard deviation of z (paper: 1)", True),
            },
        ),
        DatasetSpec(
            name="synthetic-logistic",
            summary="small logistic regression with a known model, for smoke runs",
            builder="synthetic:build_logistic",
            variants={
                "small": (),
                "links-p5000": (),
                "links-p25000": (),
                "links-p125000": (),
                "links-p125000-r20": (),
                "custom": (),
            },
            variant_help={
                "small": "2000 + 500 rows, p = 50",
                "links-p5000": "400 + 80 rows, p = 5000 (emulated network runs)",
                "links-p25000": "336 + 84 rows, p = 25000 (paper 001 on the emulated network)",
                "links-p125000": "16 + 8 rows, p = 125000 (emulated network runs, 1 MB gradients)",
                "links-p125000-r20": "20 + 8 rows, p = 125000 (1 MB gradients, n up to 20)",
                "custom": "--rows, --features, --test-rows",
            },
            seed_default=0,
            seed_help="seed of numpy.random.default_rng",
            options={"rows": _ROWS, "features": _FEATURES, "test_rows": _TEST_ROWS},
        ),
    )
}


def available() -> list[str]:
    """Names accepted by ``prepare``, sorted."""
    return sorted(DATASETS)


def get(name: str) -> DatasetSpec:
    """The spec of data set ``name``; ``UnknownNameError`` naming the choices if unknown."""
    if name not in DATASETS:
        raise UnknownNameError("data set", name, DATASETS)
    return DATASETS[name]
