"""The workflow's jobs cache their bytecode whatever the environment says."""

from gradcode.pipeline.bytecode import VARIABLE, cache_for_jobs


def test_a_set_variable_is_unset_and_said():
    environ = {VARIABLE: "1", "PATH": "/bin"}
    notice = cache_for_jobs(environ)
    assert environ == {"PATH": "/bin"}
    assert notice is not None and VARIABLE in notice and "\n" not in notice


def test_an_unset_or_empty_variable_is_left_and_nothing_said():
    environ = {"PATH": "/bin"}
    assert cache_for_jobs(environ) is None and environ == {"PATH": "/bin"}
    # Python treats an empty value as unset: nothing to say, and nothing left behind
    environ = {VARIABLE: ""}
    assert cache_for_jobs(environ) is None and environ == {}
