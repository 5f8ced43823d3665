"""gradcode: gradient coding for straggler- and communication-efficient distributed GD."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # looked up on first use: importlib.metadata costs 50-80 ms, and every MPI rank imports
    # this package while twenty of them share two cores
    if name != "__version__":
        raise AttributeError(f"module 'gradcode' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:  # the one version is pyproject.toml's, as installed
        found = version("gradcode")
    except PackageNotFoundError:  # a source tree on sys.path without an installation
        found = "0+unknown"
    globals()["__version__"] = found
    return found
