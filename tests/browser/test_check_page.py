"""The browser check finds a broken image and a console error, and passes a clean page."""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from tests.browser.check_page import main

# CI installs Debian's chromium (.ci/run): there a missing browser fails instead of skipping
pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None and os.environ.get("CI") != "true",
    reason="no chromium on PATH (apt-get install -y chromium)",
)


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack("!I", len(data)) + body + struct.pack("!I", zlib.crc32(body))

    header = struct.pack("!IIBBBBB", 1, 1, 8, 0, 0, 0, 0)  # 1 x 1, 8-bit grey
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x00"))
        + chunk(b"IEND", b"")
    )


def test_a_site_with_a_broken_image_and_a_console_error_fails(tmp_path, capsys):
    (tmp_path / "dot.png").write_bytes(_png())
    (tmp_path / "index.html").write_text(
        '<html><body><img src="dot.png"><img loading="lazy" src="dot.png"'
        ' style="margin-top: 4000px"></body></html>'
    )
    assert main([str(tmp_path)]) == 0
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.html").write_text(
        '<html><body><img src="gone.png"><script>console.error("boom")</script></body></html>'
    )
    assert main([str(tmp_path)]) == 1
    errors = capsys.readouterr().err
    assert "sub/bad.html: image not loaded" in errors and "gone.png" in errors
    assert "console.error: boom" in errors
    assert "index.html" not in errors


def test_click_names_a_selector_that_matches_nothing(tmp_path, capsys):
    page = Path(tmp_path, "page.html")
    page.write_text("<html><body><p>nothing to open</p></body></html>")
    assert main([str(page), "--click", "a.entry"]) == 1
    assert "nothing matches --click 'a.entry'" in capsys.readouterr().err
