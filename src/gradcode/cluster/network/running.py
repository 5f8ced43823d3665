"""The cluster that is up, as the commands that act on it find it: its spec (or a one-line
error saying to bring one up) and a command's argv on one of its nodes. The subcommands that act
on a running cluster start here, from whichever room they drive."""

from __future__ import annotations

from gradcode.cluster.network import namespaces
from gradcode.cluster.network.namespaces import ClusterError
from gradcode.cluster.spec import ClusterSpec
from gradcode.cluster.state import running_spec


def current_spec() -> ClusterSpec:
    """The spec of the cluster that is up, or a one-line error saying to bring one up."""
    spec = running_spec()
    if spec is None:
        raise ClusterError("no emulated cluster is up: gradcode cluster up --nodes N first")
    return spec


def exec_argv(node: str, command: list[str]) -> list[str]:
    """``command`` run on ``node`` (checked against the cluster that is up)."""
    spec = current_spec()
    return [*namespaces.enter(spec.node(node).name), *command]
