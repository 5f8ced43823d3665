"""What the workflow runs, computed from its config: a room of its own above ``train`` and
``data``, below the workflow.

``workflow/rules/common.smk`` is glue: it hands the config to these modules and exposes what
they return to the rules. One idea per module:

- ``paths``: where every output goes under ``results/`` (the rules, the figure registry and
  the notebooks read it there);
- ``runs``: the training runs of run files and experiments, validated at DAG construction
  (``TrainingRuns``);
- ``specs``: the simulation spec files of ``simulate.specs`` (user studies, plug-in codes
  and timing models included), validated at DAG construction;
- ``stand_ins``: which data set a run really trains on (the real one, or its labelled
  stand-in when the raw files are absent);
- ``figures``: the figure registry (``workflow/figures.yaml``, validated by its schema) and
  which figures a config produces, with the ones it leaves out named.
- ``faults``: the runs that lose workers on purpose (``faults.tolerate``): started on Open MPI
  with ULFM inside ``gradcode train inject`` by their own rule, and which of their exits (an
  expected stop) passes.

Nothing below this package imports it.
"""
