"""`python build.py --serve`: bind, build, serve, watch, and clean up on Ctrl-C."""

from __future__ import annotations

import errno
import signal
import threading
from collections.abc import Callable
from types import FrameType

from site_builder.config import BuildConfig
from site_builder.errors import ServeError
from site_builder.preview import Previewer
from site_builder.server import PreviewServer


def serve(
    config: BuildConfig,
    host: str,
    port: int,
    log: Callable[[str], None],
    on_ready: Callable[[str], None],
) -> None:
    """Serve the live preview until interrupted; remove every temporary folder afterwards."""
    previewer = Previewer(config, log)
    try:
        try:
            server = PreviewServer(host, port, previewer.state)
        except OSError as error:
            in_use = error.errno == errno.EADDRINUSE
            reason = "is already in use" if in_use else f"cannot be used: {error.strerror or error}"
            raise ServeError(f"{host}:{port} {reason}; choose another --port or --host") from None
        stop = threading.Event()
        try:
            log(f"Building into {previewer.workdir} (removed on exit)")
            previewer.rebuild()
            watcher = threading.Thread(target=previewer.watch_forever, args=(stop,), daemon=True)
            watcher.start()
            signal.signal(signal.SIGTERM, _interrupt)
            on_ready(server.url)
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            server.server_close()
    finally:
        previewer.close()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Treat SIGTERM like Ctrl-C, so a stopped preview still cleans up."""
    raise KeyboardInterrupt
