"""Open pages in Debian's headless Chromium: every image loaded, no console error.

    python tests/browser/check_page.py TARGET [TARGET ...] [--click SELECTOR] [--images JS]

A TARGET is a URL, an HTML file or a directory (every ``*.html`` under it: a built
documentation site). Files and directories are served over ``http.server`` on localhost, as a
reader's browser would get them, not opened as ``file://`` (whose origin rules differ). The
page is driven over the Chrome DevTools protocol (a websocket client on the standard library,
so the check needs no package beyond Python): after the load event, every element matching
``--click`` is clicked in turn, every URL of the list the JavaScript expression ``--images``
evaluates to is added to the page as an image (the Snakemake report draws a result's image
only once its entry is opened in its app, but holds every result in its global ``results``),
lazy images are made eager, and the page is checked once they have loaded or failed. Exits 1
naming every page with a broken image or a console error (``console.error``, an uncaught
exception, or a browser log entry of level error such as a resource that failed to load).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fnmatch
import functools
import http.server
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: the flags that run Debian's chromium as root in a container, with nothing fetched on its own
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
)

#: resolves to the images that did not load (after making lazy ones eager and waiting)
IMAGES_LOADED = """
(async () => {
  const images = [...document.images];
  for (const image of images) { image.loading = "eager"; }
  await Promise.all(images.map(image => image.complete ? null : new Promise(done => {
    image.addEventListener("load", done); image.addEventListener("error", done);
    setTimeout(done, 10000);
  })));
  return images.filter(i => !(i.complete && i.naturalWidth > 0))
               .map(i => (i.currentSrc || i.src || "(no src)").slice(0, 120));
})()
"""

#: adds an image for every URL the expression (given as source) lists, resolves to how many
ADD_IMAGES = """
(() => {
  const urls = (%s);
  for (const url of urls) {
    const image = document.createElement("img"); image.src = url; document.body.append(image);
  }
  return urls.length;
})()
"""

#: clicks every element matching the selector (given as JSON), resolves to how many
CLICK_ALL = """
(async (selector) => {
  const seen = new Set();
  let clicked = 0;
  for (;;) {
    const next = [...document.querySelectorAll(selector)].find(e => !seen.has(e));
    if (!next) break;
    seen.add(next); next.click(); clicked++;
    await new Promise(done => setTimeout(done, 200));
  }
  return clicked;
})(%s)
"""


class PageError(RuntimeError):
    """The browser could not be driven (not a finding about the page)."""


class DevTools:
    """One websocket to one page target (RFC 6455, text frames, no extensions)."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        self._socket = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self._socket.sendall(
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:
            response += self._receive(1)
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise PageError(f"DevTools refused the websocket: {response[:80]!r}")
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _receive(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self._socket.recv(size - len(data))
            if not chunk:
                raise PageError("DevTools closed the websocket")
            data += chunk
        return data

    def _send(self, text: str) -> None:
        payload = text.encode()
        header = bytes([0x81])  # FIN, text
        length = len(payload)
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", length)
        mask = os.urandom(4)  # a client must mask every frame
        self._socket.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _message(self) -> dict[str, Any]:
        data = b""
        while True:
            first, second = self._receive(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._receive(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._receive(8))
            payload = self._receive(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise PageError("DevTools closed the websocket")
            if opcode in (0x9, 0xA):  # ping, pong: nothing to answer for a short session
                continue
            data += payload
            if first & 0x80:
                return json.loads(data)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """The result of ``method``; events that arrive meanwhile are kept in ``events``."""
        self._next_id += 1
        self._send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = self._message()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise PageError(f"{method}: {message['error'].get('message')}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, event: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            if time.monotonic() > deadline:
                raise PageError(f"no {event} within {timeout} s")
            self.events.append(self._message())

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise PageError(f"evaluating the check failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self._socket.close()


def console_errors(events: list[dict[str, Any]]) -> list[str]:
    """Every console error, uncaught exception and browser log error among ``events``."""
    errors = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            words = [str(a.get("value", a.get("description", ""))) for a in params["args"]]
            errors.append("console." + params["type"] + ": " + " ".join(words))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            errors.append(f"uncaught: {text}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            if entry.get("url", "").endswith("/favicon.ico"):
                continue  # asked for by the browser itself when a page names no icon
            errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".strip())
    return errors


@contextmanager
def chromium(timeout: float) -> Iterator[str]:
    """A headless Chromium; yields the HTTP address of its DevTools endpoint."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise PageError("no chromium on PATH (Debian: apt-get install -y chromium)")
    profile = tempfile.mkdtemp(prefix="browser-check-")
    try:
        process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            # its singleton's folder (org.chromium.Chromium.*) goes to TMPDIR and outlives a
            # terminated browser: inside the profile, it goes with it
            env=os.environ | {"TMPDIR": profile},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helper processes in one group, ended together
        )
        try:
            port_file = Path(profile, "DevToolsActivePort")
            deadline = time.monotonic() + timeout
            while not port_file.is_file() or not port_file.read_text().strip():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise PageError(f"{binary} did not start (exit status {process.poll()})")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port_file.read_text().split()[0]}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    finally:
        # a helper process of Chromium's may still write to its profile for a moment after
        # the browser exits (CI once found 'Default' not empty on the first removal)
        for _ in range(20):
            shutil.rmtree(profile, ignore_errors=True)
            if not os.path.exists(profile):
                break
            time.sleep(0.1)


@contextmanager
def served(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on localhost; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def check_page(
    devtools_http: str, url: str, click: str | None, images: str | None, timeout: float
) -> list[str]:
    """The problems of the page at ``url``: images not loaded, console errors."""
    request = urllib.request.Request(f"{devtools_http}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        target = json.load(response)
    page = DevTools(target["webSocketDebuggerUrl"], timeout)
    try:
        for domain in ("Runtime", "Log", "Page"):
            page.call(f"{domain}.enable")
        navigation = page.call("Page.navigate", url=url)
        if navigation.get("errorText"):
            return [f"navigation failed: {navigation['errorText']}"]
        page.wait_for("Page.loadEventFired", timeout)
        problems = []
        if click:
            if page.evaluate(CLICK_ALL % json.dumps(click)) == 0:
                problems.append(f"nothing matches --click {click!r}")
        if images:
            if page.evaluate(ADD_IMAGES % images) == 0:
                problems.append(f"--images {images!r} lists no image")
        broken = page.evaluate(IMAGES_LOADED)
        count = page.evaluate("document.images.length")
        problems += [f"image not loaded: {src}" for src in broken]
        page.call("Runtime.evaluate", expression="0")  # collects events that came meanwhile
        problems += console_errors(page.events)
        print(f"browser-check: {url}: {count} images, {len(problems)} problems", flush=True)
        return problems
    finally:
        page.close()
        urllib.request.urlopen(f"{devtools_http}/json/close/{target['id']}", timeout=timeout)


def pages(target: str, base: str | None, skip: Sequence[str] = ()) -> list[str]:
    """The URLs to open for ``target`` (served from ``base`` when it is a file or folder),
    without a folder's pages whose path inside it matches a pattern of ``skip``."""
    if base is None:
        return [target]
    path = Path(target)
    if path.is_file():
        return [base + urllib.parse.quote(path.name)]
    inside = (page.relative_to(path).as_posix() for page in sorted(path.rglob("*.html")))
    return [
        base + urllib.parse.quote(page)
        for page in inside
        if not any(fnmatch.fnmatch(page, pattern) for pattern in skip)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", help="URL, HTML file or directory of HTML pages")
    parser.add_argument("--click", help="CSS selector of elements to click once loaded")
    parser.add_argument("--images", help="JavaScript expression: URLs of images to check")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per page")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="a folder's pages to leave out (glob on the path inside it; repeatable)",
    )
    args = parser.parse_args(argv)
    failures = 0
    start = time.monotonic()
    with chromium(args.timeout) as devtools:
        for target in args.targets:
            is_url = urllib.parse.urlsplit(target).scheme in ("http", "https", "file")
            if not is_url and not Path(target).exists():
                print(f"browser-check: {target}: no such file or directory", file=sys.stderr)
                return 2
            root = Path(target) if Path(target).is_dir() else Path(target).parent
            with served(root) if not is_url else _nothing() as base:
                urls = pages(target, base, args.skip)
                if not urls:
                    print(f"browser-check: {target}: no HTML page", file=sys.stderr)
                    return 2
                for url in urls:
                    problems = check_page(devtools, url, args.click, args.images, args.timeout)
                    for problem in problems:
                        print(f"browser-check: {url}: {problem}", file=sys.stderr)
                    failures += bool(problems)
    print(f"browser-check: done in {time.monotonic() - start:.1f} s, {failures} failing pages")
    return 1 if failures else 0


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    sys.exit(main())
