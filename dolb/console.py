"""What the ``dolb`` command says on its standard error: dolb's own log lines, one
line for a mistake (or an object store's fault), and nothing but one line when the user
presses Ctrl-C."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator

from dolb.errors import DolbError


class _StandardError(logging.StreamHandler):
    """A handler that writes to whatever ``sys.stderr`` is when it writes (as logging's
    last resort does), not to the stream it was made with, which may be closed since."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_logging(verbosity: int) -> None:
    """Log dolb's messages to standard error: warnings by default, ``info`` at
    verbosity 1, ``debug`` at 2 or more, errors only at -1."""
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = _StandardError()
    handler.setFormatter(logging.Formatter("dolb: %(message)s"))
    logger = logging.getLogger("dolb")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


def error_line(exc: Exception, where: str) -> str:
    """What ``dolb: error:`` says of an error the user can act on: an object store's
    fault (even one another error was raised from; named ``where`` when no deeper code
    named it), a :class:`~dolb.errors.DolbError`, or an OSError (permission, not a
    directory, no space, name too long, ...), naming its file or else ``where``;
    anything else is a bug, raised.

    Examples
    --------
    >>> error_line(FileNotFoundError(2, "The specified bucket does not exist"), "s3://gone/runs/irma")
    's3://gone/runs/irma: The specified bucket does not exist'
    """
    from dolb.data.store.object_stores import as_store_fault  # not before an error: the command starts fast

    fault = as_store_fault(exc, where)
    if fault is not None:
        return str(fault)
    if isinstance(exc, DolbError):
        return str(exc)
    if isinstance(exc, OSError):  # one naming no file (an object store's "bucket does not exist"): named where
        return f"{exc.filename or where}: {exc.strerror or exc}"
    raise exc


@contextlib.contextmanager
def quiet_on_interrupt(verbosity: int) -> Iterator[None]:
    """On Ctrl-C, turn logging off before the KeyboardInterrupt unwinds the run.

    As the client stops, Dask logs the tasks it cancels, and distributed's ``sync`` can
    log a traceback of its own (a race in its cancel callback, through the
    ``tornado.application`` logger that distributed's configuration sets to its own
    level), so the user would read a page of noise above the one line the command
    prints. With ``-v`` every log line is kept; where Ctrl-C is ignored, or off the main
    thread, nothing changes. Logging is restored on the way out.
    """
    previous = signal.getsignal(signal.SIGINT)
    if verbosity > 0 or previous is signal.SIG_IGN or threading.current_thread() is not threading.main_thread():
        yield
        return
    disabled = logging.root.manager.disable

    def interrupted(signum, frame):
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        logging.disable(disabled)
