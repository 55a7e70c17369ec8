"""A client-side deadline on the database: the server that stops answering.

A server that is down refuses connections, and one that is slow cancels its own statements
(`statement_timeout`); both come back as errors at once. A network partition or a stalled proxy
sends nothing: a call waits in `recv` until TCP gives up, a quarter of an hour on Linux, holding
its pooled connection and the request that made it. `Deadline` keeps one thread that shuts down
the socket of a checkout that has held its connection for longer than `seconds`: the waiting call
sees the connection lost at once. What it sent may have committed before the silence (a lost
acknowledgement): a chat turn held for write-back carries its `client_turn_id`, so the write-back
finds it and stores it once (supamem.fallback).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg


@dataclass(eq=False)
class Watch:
    conn: psycopg.Connection[Any]
    due: float
    #: Set when the deadline passed and the connection was cut.
    cut: bool = field(default=False)


class Deadline:
    """Cut connections held for longer than `seconds`. One daemon thread, started on first use and
    stopped by `close()`."""

    def __init__(self, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError(f"the deadline must be a positive number of seconds, not {seconds!r}")
        self.seconds = seconds
        self._watches: set[Watch] = set()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def watching(self, conn: psycopg.Connection[Any]) -> Iterator[Watch]:
        """Watch `conn` for the block. Read the watch's `cut` after the block: once it has ended, the
        watch is gone (under the lock the cutting thread holds), so `cut` no longer changes."""
        watch = Watch(conn, time.monotonic() + self.seconds)
        with self._changed:
            self._watches.add(watch)
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="supamem-deadline", daemon=True)
                self._thread.start()
            elif len(self._watches) == 1:  # the thread waits for a first watch: every later one is due later
                self._changed.notify()
        try:
            yield watch
        finally:
            with self._changed:
                self._watches.discard(watch)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while not self._closed:
                now = time.monotonic()
                for watch in [w for w in self._watches if w.due <= now]:
                    self._watches.discard(watch)
                    watch.cut = True
                    _shut(watch.conn)
                due = min((w.due for w in self._watches), default=None)
                self._changed.wait(None if due is None else due - now)


def _shut(conn: psycopg.Connection[Any]) -> None:
    """Shut the connection's socket down under the thread reading it: its `recv` returns at once,
    and libpq reports the connection lost."""
    try:
        fd = os.dup(conn.pgconn.socket)
    except (OSError, psycopg.OperationalError):  # closed meanwhile
        return
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # not a socket any more: nothing to cut
        os.close(fd)
        return
    with sock:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
