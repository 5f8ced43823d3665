"""Data sets for the experiments, prepared reproducibly with provenance.

``prepare(name, out, raw=...)`` writes ``out/data.npz`` (CSR or dense features, labels, a
train/test split) and ``out/meta.json`` (shapes, recipe, parameters, seed, sha256 of every
input and of data.npz); ``load_prepared(out)`` reads it back as :class:`PreparedData`.

============================  =============================================================
name                          what
============================  =============================================================
``amazon``                    Amazon Employee Access (Kaggle), Tandon et al.'s recipe
``amazon-standin``            STAND-IN, NOT AMAZON: synthetic table of Amazon's shape, same encoding
``cifar10``                   CIFAR-10 from its python batches, images / 255, labels 0..9
``cifar10-standin``           STAND-IN, NOT CIFAR-10: synthetic images of its shape and range
``gisette``                   GISETTE from the UCI (or LIBSVM) files
``gisette-standin``           STAND-IN, NOT GISETTE: synthetic, same shape and value range
``synthetic-linear``          paper 001 eq. (10), (7644, 6500), (32760, 5000) and quarters
``synthetic-logistic``        small logistic set for smoke runs
============================  =============================================================

Bad input files raise :class:`DataError`, bad parameters :class:`OptionError` (both
``ValueError``, one-line messages); nothing is written then.
"""

from gradcode.data.download import download
from gradcode.data.errors import DataError, OptionError
from gradcode.data.partition import partition_offsets, partition_rows, trimmed_size
from gradcode.data.prepare import prepare
from gradcode.data.prepared import PreparedData, load_prepared, verify_prepared
from gradcode.data.registry import DATASETS, available

__all__ = [
    "DATASETS",
    "DataError",
    "OptionError",
    "PreparedData",
    "available",
    "download",
    "load_prepared",
    "partition_offsets",
    "partition_rows",
    "prepare",
    "trimmed_size",
    "verify_prepared",
]
