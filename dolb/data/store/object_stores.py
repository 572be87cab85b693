"""Object stores behind fsspec URLs: the options dolb opens them with, and their faults
told apart from everything else, in one place.

:data:`S3_OPTIONS` are the options dolb's S3 file systems are opened with: botocore's
``standard`` retries with backoff, s3fs's own ``retries``, and timeouts that bound how
long a request that gets no answer is tried (uploads too, through
:mod:`dolb.data.store.s3_session`). fsspec's own configuration overrides them, e.g.
``FSSPEC_S3='{"config_kwargs": {"read_timeout": 5, "retries": {"max_attempts": 2}}}'``
(see :func:`storage_options`).

What then reaches dolb is a *store fault* (:func:`store_fault`): one of botocore's or
aiohttp's errors, or one that s3fs or dolb raised from it (an ``OSError`` translated
from HTTP 503, a :class:`~dolb.errors.DataError` naming a chunk that could not be
fetched). A fault is never a cell's failure nor a damaged dataset: the run stops with
one line (:func:`fault_error`) and resumes when run again. A missing key (HTTP 404) or a
refused permission (403) is not a fault: they say something about the data. How long a
fault takes to surface: docs/design/data-store.md.

Examples
--------
>>> store_fault(ValueError("bad chunk")) is None
True
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Iterator

import fsspec
import fsspec.asyn

from dolb.errors import StoreFault

S3_OPTIONS = {
    "config_kwargs": {
        "connect_timeout": 5,
        "read_timeout": 15,
        "retries": {"mode": "standard", "max_attempts": 3},
    },
}
"""s3fs's options by default: up to three attempts of botocore's with exponential
backoff (jittered, at most 20 s) on connection errors, timeouts, HTTP 5xx and
throttling, with 5 s to connect and 15 s of silence at most (s3fs's own timeouts)."""

DEFAULTS = {"s3": S3_OPTIONS, "s3a": S3_OPTIONS}
"""Options by protocol."""

THROTTLED = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "TooManyRequests",
                       "RequestLimitExceeded", "ServiceUnavailable", "InternalError"})
"""Error codes of a server that is busy or failing, whatever the HTTP status it came with."""


def storage_options(url: str) -> dict:
    """The options dolb opens ``url``'s file system with: :data:`DEFAULTS` of its
    protocol, overridden key by key (the keys of ``config_kwargs`` too) by fsspec's
    configuration of it (``~/.config/fsspec``, ``FSSPEC_<PROTOCOL>``); for S3, requests
    sent through :class:`~dolb.data.store.s3_session.BoundedSession` unless that
    configuration names another ``http_session_cls``.

    Examples
    --------
    >>> storage_options("s3://bucket/x")["config_kwargs"]["connect_timeout"]
    5
    >>> storage_options("data/store"), storage_options("memory://x")
    ({}, {})
    """
    protocol = url.split("://", 1)[0] if "://" in url else ""
    options = copy.deepcopy(DEFAULTS.get(protocol, {}))  # botocore rewrites the retries it is given
    for key, value in fsspec.config.conf.get(protocol, {}).items():
        both = isinstance(value, dict) and isinstance(options.get(key), dict)
        options[key] = {**options[key], **value} if both else value
    if protocol in DEFAULTS:
        from dolb.data.store.s3_session import BoundedSession  # imports aiobotocore: for S3 URLs only

        options.setdefault("config_kwargs", {}).setdefault("http_session_cls", BoundedSession)
    return options


CHUNK_READS = {"max_concurrency": 1, "config_kwargs": {"response_checksum_validation": "when_required"}}
"""s3fs's options for a Zarr store read as a dataset, over :func:`storage_options`: a
chunk is fetched by one request (s3fs would first ask its size, a second request, to
split a large object into concurrent ranges; dolb's chunks are a few MB, and the stream
fetches many at once), and botocore does not check a CRC32 of the bytes it receives (a
quarter of the reading process's time on a fast link), as dolb checks each chunk's own
CRC32C, then its manifest checksum, whatever its source."""


def forget_s3_filesystems() -> None:
    """Close the connections of every S3 file system this process holds, then forget
    them, so that the next S3 URL opened gets a new one (for an endpoint or credentials
    changed meanwhile: s3fs keeps a file system for each set of arguments, whatever the
    environment says when it is reused).

    s3fs's own ``S3FileSystem.clear_instance_cache()`` forgets them without closing
    them: their HTTP sessions are then left to the garbage collector, which says
    ``Unclosed client session`` on the console. The file systems of dolb's Zarr stores
    are asynchronous ones, whose sessions belong to the event loop of Zarr's I/O
    thread: each is closed in the loop it was opened in.
    """
    s3fs = sys.modules.get("s3fs")
    if s3fs is None:
        return
    for fs in list(s3fs.S3FileSystem._cache.values()):
        client, loop = fs._s3, _session_loop(fs)
        if client is not None and loop is not None and loop.is_running():
            with contextlib.suppress(Exception):  # a connection already gone: nothing to close
                fsspec.asyn.sync(loop, client.__aexit__, None, None, None, timeout=10)
        fs._s3 = None
    s3fs.S3FileSystem.clear_instance_cache()


def _session_loop(fs):
    """The event loop ``fs``'s S3 client was opened in: the file system's own, or for
    an asynchronous one, its HTTP sessions' (None when it opened none)."""
    if fs._loop is not None or fs._s3 is None:
        return fs._loop
    sessions = getattr(fs._s3._endpoint.http_session, "_sessions", None) or {}
    return next((session.loop for session in sessions.values()), None)


def chunk_store_options(url: str) -> dict:
    """The options dolb opens a dataset's store at ``url`` with for reading:
    :func:`storage_options`, with :data:`CHUNK_READS` for S3 (where fsspec's
    configuration does not set them).

    >>> chunk_store_options("s3://bucket/x")["config_kwargs"]["response_checksum_validation"]
    'when_required'
    """
    protocol = url.split("://", 1)[0] if "://" in url else ""
    if protocol not in DEFAULTS:
        return storage_options(url)
    options = {**CHUNK_READS, **storage_options(url)}
    options["config_kwargs"] = {**CHUNK_READS["config_kwargs"], **options["config_kwargs"]}
    return options


def _classes(module: str, names: tuple[str, ...]) -> tuple[type, ...]:
    """The classes ``names`` of ``module`` if it is imported (else none of its errors
    can have been raised: classifying a local error imports nothing)."""
    found = sys.modules.get(module)
    return () if found is None else tuple(getattr(found, name) for name in names)


def _is_fault(error: BaseException) -> bool:
    """Whether ``error`` itself is the store's fault (not what was raised from it)."""
    transport = (*_classes("botocore.exceptions", ("BotoCoreError",)), *_classes("aiohttp", ("ClientError",)),
                 *_classes("fsspec.exceptions", ("FSTimeoutError",)))
    if isinstance(error, transport):
        return True
    if not isinstance(error, _classes("botocore.exceptions", ("ClientError",))):
        return False
    response = error.response
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    return status >= 500 or status == 429 or response.get("Error", {}).get("Code") in THROTTLED


def store_fault(error: BaseException) -> BaseException | None:
    """The object store's fault that ``error`` is, or was raised from (following the
    chain Python would print: the cause, else the context), or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        if _is_fault(error):
            return error
        seen.add(id(error))
        error = error.__cause__ if error.__cause__ is not None else (
            None if error.__suppress_context__ else error.__context__)
    return None


CREDENTIALS_MISSING = frozenset({"NoCredentialsError", "PartialCredentialsError"})
"""botocore's errors of a process that has no (or half its) credentials: not the store's
fault but the host's set-up."""


def fault_error(where: str, fault: BaseException, host: str = "") -> StoreFault:
    """The one-line error of a store fault met while reaching ``where`` (a URL), on
    ``host`` (``" on host NAME (worker ADDRESS)"``, or empty on the client): missing
    credentials are told as such, and how to give them.

    Examples
    --------
    >>> print(fault_error("s3://b/a", TimeoutError("no\\nanswer")))  # doctest: +NORMALIZE_WHITESPACE
    s3://b/a: the object store failed after retries (TimeoutError: no answer); what is stored is whole:
    try again once it answers
    """
    reason = " ".join(str(fault).split())
    reason = f"{type(fault).__name__}: {reason}" if reason else type(fault).__name__
    if type(fault).__name__ in CREDENTIALS_MISSING:
        return StoreFault(f"{where}: no credentials for the object store{host} ({reason}): give them on every host "
                          "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), then run again", where, fault)
    return StoreFault(f"{where}: the object store failed after retries ({reason}){host}; what is stored is whole: "
                      "try again once it answers", where, fault)


def as_store_fault(error: BaseException, where: str, host: str = "") -> StoreFault | None:
    """``error`` as a :class:`~dolb.errors.StoreFault`: itself if it is one already
    (naming its own URL), :func:`fault_error` naming ``where`` and ``host`` if it is a
    store fault (:func:`store_fault`), else None."""
    if isinstance(error, StoreFault):
        return error
    fault = store_fault(error)
    return None if fault is None else fault_error(where, fault, host)


@contextlib.contextmanager
def reaching(where: str) -> Iterator[None]:
    """Raise a store fault met in the block as :func:`fault_error` naming ``where``
    (a fault already told, naming its own URL, goes through as it is)."""
    try:
        yield
    except Exception as exc:
        told = as_store_fault(exc, where)
        if told is None or told is exc:
            raise
        raise told from None
