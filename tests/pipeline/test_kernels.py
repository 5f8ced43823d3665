"""papermill's ``gradcode`` engine runs a notebook's kernel on Unix sockets in a folder of its
own (``gradcode.pipeline.kernels``): no TCP port for anything else to take."""

from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import papermill
import pytest
from papermill.engines import papermill_engines

from gradcode.pipeline import kernels

# the kernel says how it was started: its transport, its sockets' prefix, and whether that
# prefix's folder is a private one
CELL = """
import json, os
from ipykernel.kernelapp import IPKernelApp
app = IPKernelApp.instance()
print(json.dumps({"transport": app.transport, "ip": app.ip,
                  "sockets": sorted(os.listdir(os.path.dirname(app.ip)))}))
"""


def _notebook(path: Path) -> Path:
    cells = [nbformat.v4.new_code_cell(CELL)]
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec}), path)
    return path


def _run(directory: Path) -> dict:
    source = _notebook(directory / "source.ipynb")
    executed = directory / "executed.ipynb"
    papermill.execute_notebook(
        str(source),
        str(executed),
        kernel_name="python3",
        engine_name=kernels.NAME,
        progress_bar=False,
        cwd=str(directory),
    )
    output = nbformat.read(executed, as_version=4).cells[0].outputs[0]["text"]
    return json.loads(output)


def test_papermill_finds_the_engine_by_its_name():
    assert papermill_engines.get_engine(kernels.NAME) is kernels.PrivateSocketEngine


def test_the_kernel_binds_socket_files_in_a_folder_removed_after_it(tmp_path):
    started = _run(tmp_path)
    assert started["transport"] == "ipc"
    folder = os.path.dirname(started["ip"])
    assert os.path.basename(folder).startswith("gradcode-kernel-")
    assert Path(folder).parent == Path(tempfile.gettempdir())
    # shell, iopub, stdin, control and heartbeat: five sockets, only its own
    assert started["sockets"] == [f"kernel-{port}" for port in range(1, 6)]
    assert not os.path.exists(folder)
    assert not list(tmp_path.glob("kernel-*"))


def test_kernels_started_together_in_one_folder_do_not_meet(tmp_path):
    # jupyter_client's own ipc default names the sockets kernel-ipc-1.. in the working folder,
    # where two kernels started together would race for the same files
    folders = [tmp_path / str(n) for n in range(3)]
    for folder in folders:
        folder.mkdir()
    with ThreadPoolExecutor(3) as pool:
        started = list(pool.map(_run, folders))
    assert len({os.path.dirname(one["ip"]) for one in started}) == 3


def test_a_temporary_folder_too_long_for_a_socket_path_is_named_in_one_line():
    folder = "/" + "x" * 120
    with pytest.raises(ValueError, match=r"kernel socket folder .*too long.*set TMPDIR shorter"):
        kernels.private_socket_config(folder)
    config = kernels.private_socket_config("/tmp/short")
    assert config.KernelManager.transport == "ipc"
    assert config.KernelManager.ip == "/tmp/short/kernel"
