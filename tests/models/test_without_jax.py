"""The networks' extra: nothing imports JAX until a network is built (not the ranks of a
logistic run either), and building one without it is one line naming the extra."""

from tests.test_extras import _python

#: JAX alone simulated missing (the other extras stay, so the runtime's modules import)
NO_JAX = """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""


def test_a_network_without_the_nn_extra_is_one_line_and_linear_models_never_load_jax():
    done = _python(
        f"{NO_JAX}\n"
        "import gradcode, gradcode.models, gradcode.runfile.reference\n"
        "import gradcode.train.run, gradcode.train.session, gradcode.train.worker\n"
        "from gradcode.models import build\n"
        "from gradcode.extras import MissingExtra\n"
        "build('logistic').initial_parameters(5, 0); build('linear')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))\n"
        "try:\n    build('mlp')\nexcept MissingExtra as error:\n    print(error)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",
        "the neural-network models (gradcode.models.nn) needs the 'nn' extra: "
        "pip install 'gradcode[nn]'",
    ]
