"""Keys from the terminal for ``pathsel top``'s live view, one at a time, as esxtop reads them."""

from __future__ import annotations

import os
import select
import time
from typing import Any, TextIO

__all__ = ["Keys"]


class Keys:
    """Single keys from a terminal, without echo or Enter (cbreak mode); nothing when stdin is not a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.fd = stream.fileno() if stream.isatty() else None
        self.saved: Any = None

    def __enter__(self) -> Keys:
        if self.fd is not None:
            import termios
            import tty

            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None and self.saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float) -> str | None:
        """A key pressed within ``timeout`` seconds (waits that long at most; returns at once on a key)."""
        if self.fd is None:
            if timeout > 0:
                time.sleep(timeout)
            return None
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
        if not ready:
            return None
        return os.read(self.fd, 1).decode(errors="replace")
