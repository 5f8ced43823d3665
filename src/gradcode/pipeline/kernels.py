"""The figure notebooks' kernels talk to papermill over Unix sockets in a private folder.

papermill's own engine starts each kernel on TCP ports that jupyter_client picks by binding
port 0 and letting it go again; the kernel binds them a second or more later. Anything else on
the machine that binds a port in between (another kernel, an MPI rank's listener) can take one,
and the kernel dies before it answers ("Address already in use": nteract/papermill#511). With
the workflow's jobs beside other work, as in CI, that is a figure failing at random. Here the
kernel binds socket files in a folder made for it alone and removed after it, which nothing
else can take. The workflow's figure rule and the notebook tests run papermill with
``--engine gradcode`` (the ``papermill.engine`` entry point in pyproject.toml).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from papermill.engines import NBClientEngine
from traitlets.config import Config

#: the name papermill knows this engine by (``papermill --engine gradcode``)
NAME = "gradcode"

#: the longest socket path Linux takes (``sun_path`` holds 108 bytes with its NUL)
_LONGEST_SOCKET = 107


def private_socket_config(folder: str) -> Config:
    """The kernel manager's configuration for a kernel whose sockets are files in ``folder``."""
    prefix = os.path.join(folder, "kernel")
    # jupyter_client numbers the sockets from 1: five of them, one digit each
    if len(f"{prefix}-9") > _LONGEST_SOCKET:
        raise ValueError(
            f"kernel socket folder {folder!r} is too long for a Unix socket path "
            f"(at most {_LONGEST_SOCKET - len('/kernel-9')} characters): set TMPDIR shorter"
        )
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = prefix
    return config


class PrivateSocketEngine(NBClientEngine):
    """papermill's nbclient engine, with the kernel on Unix sockets in its own folder."""

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
        with tempfile.TemporaryDirectory(prefix="gradcode-kernel-") as folder:
            return super().execute_managed_notebook(
                nb_man, kernel_name, config=private_socket_config(folder), **kwargs
            )
