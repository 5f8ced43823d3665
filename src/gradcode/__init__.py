"""gradcode: gradient coding for straggler- and communication-efficient distributed GD."""

__version__ = "0.1.0"
