"""Example gradcode plug-in: ``group-replication`` (a code) and ``pareto-master-worker`` (a
timing model), registered through the ``gradcode.codes`` and ``gradcode.timing_models``
entry-point groups in this package's ``pyproject.toml``."""
