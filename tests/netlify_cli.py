"""Serve a built site with the real Netlify CLI (`netlify dev --offline`), for deploy tests.

`serve_netlify_cli(site_dir, netlify_toml)` runs the pinned netlify-cli that `.ci/run` installs
into `.netlify-cli/` (or the executable named by `NETLIFY_CLI`) as

    netlify dev --offline --dir SITE_DIR --port PORT --no-open --skip-gitignore
                --internal-disable-edge-functions

on a free loopback port, waits until it answers, yields its base URL (`http://127.0.0.1:PORT`,
no trailing slash) and, on exit, kills its whole process group. Netlify's own code then applies
the `_redirects` in the site folder and the `[[headers]]` / `[[redirects]]` of netlify.toml, so a
test can check the Python emulator (tests/netlify_server.py) against the real rules engine.

It is kept offline and out of the repository:

- it runs in a fresh temporary folder holding only a copy of the netlify.toml and of the
  local Build plugins it names, `netlify/` beside it (netlify dev loads them, and fails to
  start if one is missing; it writes `.netlify/` state, a local database and a blobs folder
  into its working folder);
- `--offline` skips every call to Netlify's API; `--internal-disable-edge-functions` (hidden,
  internal) skips the Deno download the edge-functions runtime would need;
- `HOME` and the `XDG_*` folders point into that temporary folder, with a global config that
  disables telemetry, so nothing is read from or written to the user's own Netlify config;
- `CI=1` makes it non-interactive and turns off telemetry and the V8 compile cache,
  `NO_UPDATE_NOTIFIER=1` turns off the update check, `BROWSER=none` and `--no-open` keep it from
  opening a browser, `--skip-gitignore` from editing any `.gitignore`.

When the CLI is not installed the calling test is skipped, or failed under CI (`CI` set), the
same way the browser tests treat a missing chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NETLIFY_CLI_VERSION = "27.10.2"
DEFAULT_CLI = ROOT / ".netlify-cli" / "node_modules" / ".bin" / "netlify"
CLI_ENV = "NETLIFY_CLI"
START_TIMEOUT = 90.0


def netlify_cli() -> Path:
    """The netlify executable to run: `$NETLIFY_CLI`, else the copy `.ci/run` installs.

    Skips the calling test when it is missing, or fails it under CI, where `.ci/run` must have
    installed it.
    """
    configured = os.environ.get(CLI_ENV)
    executable = Path(configured) if configured else DEFAULT_CLI
    if not executable.is_file() or shutil.which("node") is None:
        message = f"netlify-cli is missing ({executable})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: .ci/run must install netlify-cli@{NETLIFY_CLI_VERSION}")
        pytest.skip(
            f"{message}: npm install --prefix .netlify-cli netlify-cli@{NETLIFY_CLI_VERSION}"
        )
    return executable


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def offline_environment(home: Path) -> dict[str, str]:
    """The CLI's environment: a throwaway home, no telemetry, no prompts, no browser."""
    config = home / ".config"
    (config / "netlify").mkdir(parents=True, exist_ok=True)
    (config / "netlify" / "config.json").write_text(
        json.dumps({"telemetryDisabled": True}), "utf-8"
    )
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT", "TMPDIR", "NODE_EXTRA_CA_CERTS")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(config),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        CI="1",
        NO_UPDATE_NOTIFIER="1",
        BROWSER="none",
        NO_COLOR="1",
        FORCE_COLOR="0",
    )
    return env


def _answers(url: str) -> bool:
    """True once the server at `url` answers HTTP at all (any status)."""
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the CLI's whole process group: TERM, then KILL if it lingers."""
    if process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # stragglers the TERM left in the group
    process.wait(timeout=10)


@contextmanager
def serve_netlify_cli(site_dir: Path, netlify_toml: Path) -> Iterator[str]:
    """Serve `site_dir` with `netlify dev --offline` and `netlify_toml`; yield its base URL."""
    executable = netlify_cli()
    with tempfile.TemporaryDirectory(prefix="netlify-dev-") as scratch:
        workdir = Path(scratch) / "project"
        workdir.mkdir()
        shutil.copy2(netlify_toml, workdir / "netlify.toml")
        plugins = netlify_toml.parent / "netlify"  # the local Build plugins it names
        if plugins.is_dir():
            shutil.copytree(plugins, workdir / "netlify")
        log_path = Path(scratch) / "netlify-dev.log"
        port = free_port()
        command = [
            str(executable),
            "dev",
            "--offline",
            "--dir",
            str(Path(site_dir).resolve()),
            "--port",
            str(port),
            "--no-open",
            "--skip-gitignore",
            "--internal-disable-edge-functions",
        ]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                cwd=workdir,
                env=offline_environment(Path(scratch) / "home"),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        base_url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _answers(base_url + "/"):
                if process.poll() is not None or time.monotonic() > deadline:
                    output = log_path.read_text("utf-8", "replace")[-4000:]
                    state = (
                        f"exited with {process.returncode}"
                        if process.poll() is not None
                        else f"did not answer within {START_TIMEOUT:.0f} s"
                    )
                    pytest.fail(f"netlify dev {state}: {' '.join(command)}\n{output}")
                time.sleep(0.2)
            yield base_url
        finally:
            _stop(process)
