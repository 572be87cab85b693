"""The HTTP session dolb's S3 clients send their requests through: aiobotocore's own,
with the sending of a request's body bounded in time as the reading of its answer is.

aiohttp's read timeout (``read_timeout`` of the storage options) starts once a
request's body is sent; nothing bounds the sending. A server that accepts the connection
and never answers held an upload, and the run, for good, twice over: botocore asks for
``Expect: 100-continue`` before an upload's body, and aiohttp waits for the server's
``100 Continue`` without a timeout; and a body larger than the sockets' buffers waits
for the server to read it, without a timeout. So :class:`BoundedSession` sends no
``Expect`` header (it only spares sending a body the server would refuse; HTTP lets a
client send it without asking, RFC 9110, 10.1.1), and hands a body of more than
:data:`PIECE` bytes to aiohttp a piece at a time, giving up the request, as timed out,
when no piece left for ``read_timeout`` seconds. The request then fails and is retried
like any other that timed out (:mod:`dolb.data.store.object_stores`).

It is given to botocore by :func:`~dolb.data.store.object_stores.storage_options`
(``config_kwargs["http_session_cls"]``); this module imports aiobotocore, so it is
imported only when an S3 URL is opened.
"""

from __future__ import annotations

import asyncio
import io

from aiobotocore.httpsession import AIOHTTPSession
from botocore.exceptions import ReadTimeoutError

PIECE = 1 << 20
"""Bytes of a request's body handed to aiohttp at a time."""


class BoundedSession(AIOHTTPSession):
    """aiobotocore's aiohttp session, sending no ``Expect: 100-continue`` and giving up
    a body that stops leaving (see the module docstring)."""

    async def send(self, request):
        """Send ``request`` (a botocore ``AWSPreparedRequest``); its answer as
        aiobotocore's session gives it.

        Raises
        ------
        botocore.exceptions.ReadTimeoutError
            No piece of the body left for ``read_timeout`` seconds.
        """
        if "Expect" in request.headers:
            del request.headers["Expect"]
        body, patience = request.body, self._timeout.sock_read
        payload = body.getvalue()[body.tell():] if isinstance(body, io.BytesIO) else body  # s3fs's bodies
        if not isinstance(payload, (bytes, bytearray, memoryview)) or len(payload) <= PIECE or not patience:
            return await super().send(request)
        loop = asyncio.get_running_loop()
        handed = [loop.time()]  # when the last piece was handed over; None once all left

        async def pieces():
            view = memoryview(payload)
            for start in range(0, len(view), PIECE):
                handed[0] = loop.time()
                yield bytes(view[start : start + PIECE])
            handed[0] = None

        request.body = pieces()  # botocore sends the same request again on a retry: put back below
        try:
            sending = asyncio.ensure_future(super().send(request))
            while not (await asyncio.wait({sending}, timeout=patience))[0]:
                if handed[0] is not None and loop.time() - handed[0] > patience:
                    sending.cancel()
                    raise ReadTimeoutError(endpoint_url=request.url)
            return sending.result()
        finally:
            request.body = body
