"""Exceptions: every C status code becomes one of these, carrying the code and
exactly the message the failing C call left (twincache_last_error). One class
per family, all under twincache.Error."""
from . import _capi as C


class Error(Exception):
    """Base of every twincache error. .code is the C status (0 for errors the
    binding raises itself), .message the text."""

    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code
        self.message = message


class NotFound(Error):
    """No such cache directory, graph index or key (TWINCACHE_ENOTFOUND)."""


class NotACache(Error):
    """The directory is not a twincache cache (TWINCACHE_ENOTCACHE)."""


class Corrupt(Error):
    """Bytes that are not a valid record: corrupt, checksum, zstd, too big, truncated."""


class VersionError(Error):
    """Written by a newer, incompatible format (TWINCACHE_EVERSION)."""


class InvalidArgument(Error, ValueError):
    """An argument or option out of range (TWINCACHE_EINVAL, or checked in Python)."""


class OutOfMemory(Error, MemoryError):
    """An allocation failed (TWINCACHE_ENOMEM)."""


class StorageError(Error):
    """LMDB, file system, disk full or a concurrent writer (ELMDB, EIO, EFULL, EBUSY)."""


class Mismatch(Error):
    """The cache was built with another config (TWINCACHE_EMISMATCH)."""


class Closed(Error):
    """The object is closed or failed earlier (TWINCACHE_ECLOSED)."""


class ThreadError(Error):
    """A decode thread could not be created (TWINCACHE_ETHREAD)."""


class TooManyHeld(Error):
    """The next batch needs a slot that the caller still holds (TWINCACHE_EDEADLK)."""


class StaleBatch(Error):
    """A batch handle that is no longer current (TWINCACHE_ESTALE)."""


_FAMILY = {
    C.ENOTFOUND: NotFound, C.ENOTCACHE: NotACache,
    C.ECORRUPT: Corrupt, C.ECHECKSUM: Corrupt, C.EZSTD: Corrupt, C.ETOOBIG: Corrupt,
    C.ETRUNCATED: Corrupt, C.EVERSION: VersionError, C.EINVAL: InvalidArgument,
    C.ENOMEM: OutOfMemory, C.ELMDB: StorageError, C.EIO: StorageError, C.EFULL: StorageError,
    C.EBUSY: StorageError, C.EMISMATCH: Mismatch, C.ECLOSED: Closed, C.ETHREAD: ThreadError,
    C.EDEADLK: TooManyHeld, C.ESTALE: StaleBatch,
}


def strerror(code):
    """twincache_strerror(code) as str."""
    return C.strerror(int(code)).decode("utf-8", "replace")


def last_error():
    """twincache_last_error() as str: the message the last failing twincache call
    of this thread left ("" when none)."""
    return C.last_error().decode("utf-8", "replace")


def error_from_status(code, context=""):
    """The exception for the status `code` a C call of this thread has just
    returned, carrying exactly the message that call left (twincache_last_error).
    Only where it left none: "context: twincache_strerror(code)"."""
    msg = last_error()
    if not msg:
        text = strerror(code)
        msg = f"{context}: {text}" if context else text
    return _FAMILY.get(code, Error)(msg, code)


def check(code, context=""):
    """Raises the exception of a negative status a C call has just returned
    (error_from_status); returns the status otherwise."""
    if code < 0:
        raise error_from_status(code, context)
    return code
