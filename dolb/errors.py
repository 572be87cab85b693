"""The one exception family of dolb.

Every error a user can cause (a bad pipeline file, a missing or corrupted store, an
invalid learner parameter) is raised as a :class:`DolbError` subclass whose message
names the file, key or row at fault. The command line prints that message on one line
and exits with status 2.
"""


class DolbError(Exception):
    """Base class of every error dolb reports to a user."""


class ConfigError(DolbError):
    """A pipeline file, a learner parameter or a command-line option is invalid."""


class DataError(DolbError):
    """A dataset is missing, malformed, corrupted or holds values dolb cannot learn from."""


class DatasetChanged(DataError):
    """The dataset at ``path`` is not the one a cell was planned with (its fingerprint
    differs): a worker's own copy, or a store written anew since the run began."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: not the dataset the run was planned with")
        self.path = path


class StorageError(DolbError):
    """A result folder cannot be written (no space left, no permission, ...); what is
    stored stays whole, and a run resumes once the cause is gone."""


class StoreFault(StorageError):
    """An object store (the result folder's, a dataset's or the data cache's) failed
    after retries: out of reach, timed out, or refusing requests; what is stored stays
    whole, and a run resumes once it answers (:mod:`dolb.data.store.object_stores`).
    ``where``: the URL being reached; ``fault``: the error the store's client raised."""

    def __init__(self, message: str, where: str = "", fault: BaseException | None = None) -> None:
        super().__init__(message)
        self.where, self.fault = where, fault


class MissingExtra(ConfigError):
    """A feature asked for needs an optional package that is not installed; the message
    names the extra of dolb that installs it (:mod:`dolb.extras`)."""
