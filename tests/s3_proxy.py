"""A TCP proxy in front of the test S3 server that a test can cut, restore and make
throttle: the faults of an object store, on a server whose state survives them.

``cut()`` closes the listening socket and every connection (clients are refused, as by a
server that is down); ``restore()`` listens again on the same port. ``throttle(n)``
answers the next ``n`` connections with HTTP 503 ``SlowDown`` (as S3 does when asked
too fast) and closes them; later ones are forwarded again (``n`` None: every one).
``cut_on(request, n)`` cuts as the ``n``-th request starting with ``request`` (its
method and path) arrives, before it is forwarded: a fault in the middle of a run at a
point of the test's choosing.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading

SLOW_DOWN = (b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nConnection: close\r\n"
             b"Content-Length: %d\r\n\r\n%s")
SLOW_DOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                  b"<Message>Please reduce your request rate.</Message></Error>")


class S3Proxy:
    """Forwards ``127.0.0.1:port`` to ``upstream`` (host, port) until cut."""

    def __init__(self, upstream: tuple[str, int], port: int) -> None:
        self.upstream, self.port = upstream, port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.lock = threading.Lock()
        self.connections: list[socket.socket] = []
        self.throttled: int | None = 0
        """Connections still to answer with SlowDown (None: all)."""
        self.refused = 0
        """Connections answered with SlowDown so far."""
        self.trap: tuple[bytes, int] | None = None
        """The request that cuts (see :meth:`cut_on`) and how many more until it does."""
        self.listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        """Listen again (and forward)."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Stop listening and close every connection."""
        with self.lock:
            listener, self.listener = self.listener, None
            doomed, self.connections = self.connections, []
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for connection in doomed:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    def cut_on(self, request: str, n: int) -> None:
        """Cut when the ``n``-th request starting with ``request`` (``"PUT /bucket/key"``)
        arrives, without forwarding it."""
        with self.lock:
            self.trap = (request.encode(), n)

    def _trapped(self, data: bytes) -> bool:
        """Whether ``data``, sent by a client, is the request to cut on."""
        with self.lock:
            if self.trap is None or not data.startswith(self.trap[0]):
                return False
            self.trap = (self.trap[0], self.trap[1] - 1)
            if self.trap[1] > 0:
                return False
            self.trap = None
        return True

    def throttle(self, n: int | None) -> None:
        """Answer the next ``n`` connections (None: all) with 503 SlowDown."""
        with self.lock:
            self.throttled = n

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # cut
                return
            with self.lock:
                slow = self.throttled is None or self.throttled > 0
                if slow and self.throttled is not None:
                    self.throttled -= 1
            target = self._slow_down if slow else self._forward
            threading.Thread(target=target, args=(client,), daemon=True).start()

    def _slow_down(self, client: socket.socket) -> None:
        """Read the request (its head, then its body as long as it says) and answer
        503 SlowDown."""
        with client:
            client.settimeout(2.0)
            with contextlib.suppress(OSError):
                received = b""
                while b"\r\n\r\n" not in received:
                    received += client.recv(1 << 16) or b"\r\n\r\n"
                head, _, body = received.partition(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += client.recv(1 << 16) or b"\0" * length
                answer = b"" if head.startswith(b"HEAD ") else SLOW_DOWN_BODY  # a HEAD's answer has no body
                client.sendall(SLOW_DOWN % (len(SLOW_DOWN_BODY), answer))
            with self.lock:
                self.refused += 1

    def _forward(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        with self.lock:
            if self.listener is None:  # cut meanwhile
                client.close(), server.close()
                return
            self.connections += [client, server]
        pair = {client: server, server: client}
        try:
            while True:
                ready, _, _ = select.select(list(pair), [], [], 1.0)
                for end in ready:
                    data = end.recv(1 << 16)
                    if not data:
                        return
                    if end is client and self._trapped(data):
                        self.cut()
                        return
                    pair[end].sendall(data)
        except (OSError, ValueError):  # closed by cut()
            return
        finally:
            for end in pair:
                with contextlib.suppress(OSError):
                    end.close()
