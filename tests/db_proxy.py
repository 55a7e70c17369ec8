"""A TCP proxy in front of the test database that fails as networks do.

- `arm(trigger)` loses one acknowledgement: the first reply the server sends after a client message
  containing `trigger` is dropped and both ends of that connection are closed. The server has done
  the work (an autocommit statement commits before its reply is sent); the client sees a lost
  connection.
- `stall()` stops forwarding, in both directions and on new connections, without closing anything:
  a network partition, where the client hears nothing at all. `resume()` lets it all through again.

Every other byte passes through."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class DbProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.trigger: bytes | None = None
        self.cut = threading.Event()
        self.flowing = threading.Event()
        self.flowing.set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, trigger: bytes) -> None:
        with self._lock:
            self.trigger, self.cut = trigger, threading.Event()

    def stall(self) -> None:
        self.flowing.clear()

    def resume(self) -> None:
        self.flowing.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            seen = threading.Event()  # the trigger went to the server on this connection
            threading.Thread(target=self._pipe, args=(client, server, seen, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, seen, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, seen: threading.Event, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                self.flowing.wait()
                with self._lock:
                    trigger = self.trigger
                    if upstream and trigger is not None and trigger in data:
                        self.trigger = None
                        seen.set()
                    elif not upstream and seen.is_set():
                        self.cut.set()
                        break  # the acknowledgement is lost
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

    def close(self) -> None:
        self.listener.close()


@contextmanager
def db_proxy(host: str, port: int) -> Iterator[DbProxy]:
    proxy = DbProxy(host, port)
    try:
        yield proxy
    finally:
        proxy.resume()
        proxy.close()
