"""gradcode: gradient coding for straggler- and communication-efficient distributed GD."""

from importlib.metadata import PackageNotFoundError, version

try:  # the one version is pyproject.toml's, as installed
    __version__ = version("gradcode")
except PackageNotFoundError:  # a source tree on sys.path without an installation
    __version__ = "0+unknown"
