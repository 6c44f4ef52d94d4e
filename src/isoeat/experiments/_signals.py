"""Signals around a run's last writes: an interruption stops the work, never the records that say so.

``isoeat run`` turns SIGTERM into ``KeyboardInterrupt`` (as Ctrl-C is), so a
signal stops the run where it is and the runner's cleanup writes the manifest
(``interrupted``), releases the lock and removes its staging folder. A second
signal during that cleanup, or a first one after the work has finished (while
the final manifest, the tables or the swap of ``--overwrite all`` are being
written), would cut those writes short and leave ``manifest.json`` saying
``running``. :class:`SignalGate` closes that window:

* while it is **open**, SIGINT and SIGTERM act as before (their handler raises),
  and the one that raises closes the gate (one interruption is enough);
* once **closed** (:meth:`SignalGate.close`, called when the work is done),
  they are held;
* on leaving the ``with`` block normally, the held signals are delivered to
  their handlers: the command still stops, after its records are whole.

Only signals whose handler is a Python function are gated (a default SIGTERM
ends the process at once, as before; the next run marks that run
interrupted). Outside the main thread the gate does nothing.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["SignalGate"]

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM") if hasattr(signal, n))


class SignalGate:
    """Context manager: SIGINT/SIGTERM interrupt while open, wait while closed, and are delivered on exit."""

    def __init__(self) -> None:
        self.open = True
        self.held: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGate:
        for sig in _SIGNALS:
            handler = signal.getsignal(sig)
            if not callable(handler):
                continue  # SIG_DFL / SIG_IGN: left as they are
            try:
                signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: signals are not ours to handle
                continue
            self._previous[sig] = handler
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if not self.open:
            self.held.append(signum)
            return
        try:
            self._previous[signum](signum, frame)
        except BaseException:
            self.open = False  # the cleanup that follows this interruption is not interrupted again
            raise

    def close(self) -> None:
        """From now on, hold the signals until the ``with`` block is left."""
        self.open = False

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        held, self.held = self.held, []
        if held and exc_type is None:  # the records are whole: now the command stops as it was asked to
            self._previous[held[0]](held[0], None)
