"""A real preview server process for tests: start, read its output, talk HTTP, stop."""

from __future__ import annotations

import contextlib
import http.client
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

from site_builder.preview.watching import WATCH_QUIET_MS

STARTUP_SECONDS = 30


@dataclass
class Preview:
    """A running `python build.py --serve` and everything it printed so far."""

    process: subprocess.Popen[str]
    url: str
    workdir: Path
    stderr: list[str] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return urlsplit(self.url).port or 80

    def get(self, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
        """Send one GET with the raw `path` (no client-side normalisation)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", host or f"127.0.0.1:{self.port}")
            connection.endheaders()
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def rebuilds(self) -> int:
        """Return how many rebuilds (good or failed) the server has logged."""
        return sum(1 for line in self.stderr if line.startswith(("Rebuilt", "Rebuild failed")))

    def wait_for_rebuilds(self, count: int, timeout: float = 20) -> None:
        """Wait until at least `count` rebuilds were logged."""
        deadline = time.monotonic() + timeout
        while self.rebuilds() < count:
            assert time.monotonic() < deadline, f"no rebuild {count}: {self.stderr}"
            time.sleep(0.05)

    def stop(self) -> int:
        """Send Ctrl-C and return the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def start_preview(root: Path, *args: str) -> Preview:
    """Start the preview of the project at `root` on a free loopback port."""
    process = subprocess.Popen(
        [sys.executable, str(root / "build.py"), "--serve", "--port", "0", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    stdout: list[str] = []
    stderr: list[str] = []
    threading.Thread(target=_drain, args=(process.stdout, stdout), daemon=True).start()
    threading.Thread(target=_drain, args=(process.stderr, stderr), daemon=True).start()
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while not any("Serving the preview at" in line for line in stdout):
            if process.poll() is not None:
                time.sleep(0.2)
                raise AssertionError(f"preview exited {process.returncode}: {stdout} {stderr}")
            assert time.monotonic() < deadline, f"preview did not start: {stderr}"
            time.sleep(0.05)
    except BaseException:
        process.kill()
        raise
    line = next(line for line in stdout if "Serving the preview at" in line)
    url = re.search(r"http://\S+/", line).group(0)
    workdir = next(
        Path(found.group(1))
        for entry in stderr
        if (found := re.search(r"search index built in (\S+) \(removed on exit\)", entry))
    )
    return Preview(process, url, workdir, stderr, stdout)


def _drain(stream: object, lines: list[str]) -> None:
    """Collect a process's output lines in the background."""
    for line in stream:  # type: ignore[attr-defined]
        lines.append(line.rstrip("\n"))


class EventStream:
    """A Server-Sent Events client on /__livereload that records the events it receives."""

    def __init__(self, preview: Preview, version: str = "") -> None:
        self.events: list[str] = []
        self.connection = http.client.HTTPConnection("127.0.0.1", preview.port, timeout=60)
        self.connection.request("GET", f"/__livereload?version={version}")
        self.socket = self.connection.sock  # the response keeps it once the connection lets go
        self.response = self.connection.getresponse()
        assert self.response.getheader("Content-Type") == "text/event-stream"
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for raw in self.response.fp:
                line = raw.decode().strip()
                if line.startswith("event: "):
                    self.events.append(line.removeprefix("event: "))
        except (OSError, ValueError):
            return

    def wait_for(self, name: str, count: int = 1, timeout: float = 20) -> None:
        """Wait until `count` events called `name` arrived."""
        deadline = time.monotonic() + timeout
        while self.events.count(name) < count:
            assert time.monotonic() < deadline, f"no {name} event: {self.events}"
            time.sleep(0.05)

    def close(self) -> None:
        """Close the connection, as a tab does when it leaves its page (the reader thread's
        response keeps the socket open: it is shut down first)."""
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)
        self.connection.close()


def quiet_between(times: list[float]) -> bool:
    """Whether two of these saves were as far apart as the quiet time: a machine busy with
    other tests (the suite runs in parallel) may stall the saving thread that long, and then
    a run of saves is rightly seen as two bursts; such a run is tried again."""
    return any(later - earlier >= WATCH_QUIET_MS / 1000 for earlier, later in pairwise(times))
