"""The networks' extra: nothing imports JAX until a network is built, and building one without
it is one line naming the extra."""

from tests.test_extras import BLOCKER, _python


def test_a_network_without_the_nn_extra_is_one_line_and_linear_models_never_load_jax():
    done = _python(
        f"{BLOCKER}\n"
        "import gradcode, gradcode.models, gradcode.runfile.reference\n"
        "from gradcode.models import build\n"
        "from gradcode.extras import MissingExtra\n"
        "build('logistic'); build('linear')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jax'))\n"
        "try:\n    build('mlp')\nexcept MissingExtra as error:\n    print(error)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",
        "the neural-network models (gradcode.models.nn) needs the 'nn' extra: "
        "pip install 'gradcode[nn]'",
    ]
