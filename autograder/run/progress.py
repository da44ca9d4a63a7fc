"""A progress line on stderr: done/total, submissions flagged for review, and the time left.

"Flagged" counts every record the grader marked for review, those of this run and those ``--resume`` kept
(``failed`` at the start): what the summary's "need review" and "reviewed by hand" add up to."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, done: int = 0, enabled: bool = True, stream=None, failed: int = 0):
        self.total, self.done, self.failed = total, done, failed
        self.start_done, self.start = done, time.monotonic()
        self.enabled, self.stream = enabled, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_pct = -1

    def advance(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += int(failed)
        self._show()

    def line(self) -> str:
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        rate_done = self.done - self.start_done
        elapsed = time.monotonic() - self.start
        eta = elapsed / rate_done * (self.total - self.done) if rate_done else 0.0
        return (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} graded, "
                f"{self.failed} flagged for review, ETA {int(eta) // 60}:{int(eta) % 60:02d}")

    def _show(self) -> None:
        if not self.enabled:
            return
        pct = 100 * self.done // max(self.total, 1)
        if self.tty:
            self.stream.write("\r" + self.line())
        elif pct // 10 != self._last_pct // 10 or self.done == self.total:
            self.stream.write(self.line() + "\n")
        self._last_pct = pct
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
