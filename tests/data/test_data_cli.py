"""``gradcode data ...`` through a parser built as the main CLI wires it (``run_data_cli``)."""

import json

import pytest

from tests.helpers.data import assert_nothing_written
from tests.helpers.data import run_data_cli as run


def test_list(capsys):
    status, out, _ = run(["data", "list"], capsys)
    assert status == 0
    for name in ("amazon", "gisette", "gisette-standin", "synthetic-linear", "synthetic-logistic"):
        assert f"\n{name} " in f"\n{out}"
    assert "--variant tandon" in out and "(default)" in out and "STAND-IN, NOT GISETTE" in out


def test_prepare_info_verify(tmp_path, capsys):
    out_dir = tmp_path / "smoke"
    argv = ["data", "prepare", "synthetic-logistic", "--out", str(out_dir), "--seed", "3"]
    status, out, err = run([*argv, "--partitions", "4", "--trim-to-multiple", "8"], capsys)
    assert status == 0, err
    assert out.startswith(f"prepared synthetic-logistic (variant small) in {out_dir}\n")
    assert "X_train      2,000 x 50" in out and "partitions   k = 4, sizes 500..500" in out

    status, out, _ = run(["data", "info", str(out_dir)], capsys)
    assert status == 0 and "seed         3" in out and "sha256" in out
    status, out, _ = run(["data", "info", str(out_dir), "--json"], capsys)
    meta = json.loads(out)
    assert meta["dataset"] == "synthetic-logistic" and meta["partitions"]["k"] == 4

    status, out, _ = run(["data", "verify", str(out_dir)], capsys)
    assert status == 0 and out.startswith("data.npz matches meta.json")
    data = out_dir / "data.npz"
    content = bytearray(data.read_bytes())
    content[len(content) // 2] ^= 0xFF
    data.write_bytes(bytes(content))
    status, _, err = run(["data", "verify", str(out_dir)], capsys)
    assert status == 1 and "differs from meta.json" in err


def test_options_reach_the_library(tmp_path, capsys):
    out_dir = tmp_path / "lin"
    argv = ["data", "prepare", "synthetic-linear", "--variant", "custom", "--out", str(out_dir)]
    status, _, err = run([*argv, "--rows", "12", "--features", "3", "--noise-std", "0.5"], capsys)
    assert status == 0, err
    meta = json.loads((out_dir / "meta.json").read_text())
    assert meta["options"] == {"rows": 12, "features": 3, "noise_std": 0.5}


def test_standin_is_flagged_in_the_summary(tmp_path, capsys, monkeypatch):
    import gradcode.data.gisette_standin as standin

    monkeypatch.setitem(standin.VARIANTS, "uci", (20, 10))  # keep the test fast
    status, out, _ = run(
        ["data", "prepare", "gisette-standin", "--out", str(tmp_path / "s")], capsys
    )
    assert status == 0 and out.splitlines()[1].startswith("STAND-IN")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["prepare", "amazon", "--variant", "nope"], "amazon has no variant 'nope'"),
        (["prepare", "gisette", "--seed", "1"], "gisette takes no seed"),
        (["prepare", "synthetic-logistic", "--bogus", "1"], "unrecognized arguments: --bogus 1"),
        (["prepare", "amazon", "--raw", "/no/such/dir"], "dir: not found (/no/such/dir)"),
        (["info", "/no/such/dir"], "meta.json: not found in /no/such/dir"),
    ],
)
def test_user_errors_are_one_line_exit_2(tmp_path, capsys, argv, message):
    argv = ["data", *argv]
    if argv[1] == "prepare":
        argv += ["--out", str(tmp_path / "out")]
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("gradcode: error: ") and err.count("\n") == 1 and message in err
    assert_nothing_written(tmp_path / "out")


def test_raw_defaults_to_the_data_dir(tmp_path, capsys, monkeypatch, data_fixtures):
    monkeypatch.setenv("GRADCODE_DATA_DIR", str(data_fixtures))
    out_dir = tmp_path / "amazon"
    argv = ["data", "prepare", "amazon", "--out", str(out_dir), "--no-verify-checksums"]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    assert "NOT verified" in out and "verification was switched off" in out
    assert "reported 343,474 features / 26,220 training rows" in out
    monkeypatch.delenv("GRADCODE_DATA_DIR")
    status, _, err = run([*argv[:4], str(tmp_path / "other")], capsys)
    assert status == 2 and "train.csv: not found" in err


def test_download_offline_message(tmp_path, capsys, monkeypatch):
    import urllib.error
    import urllib.request

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    status, _, err = run(["data", "download", "gisette", "--to", str(tmp_path / "g")], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "gisette_train.data: cannot download https://archive.ics.uci.edu/" in err
    assert (
        f"place the UCI file gisette_train.data (sha256 6d4c5e998afe6793...) in {tmp_path / 'g'}"
        in err
    )
    assert not (tmp_path / "g").exists()
