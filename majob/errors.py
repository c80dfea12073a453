"""The one error tree of majob.

Every failure a user can cause or meet is a ``MajobError``; the CLI prints it as one clear line
(what, where, what to do) and exits with its ``exit_code``. ``MAJOB_DEBUG=1`` shows the traceback.

::

    MajobError                      exit 1 unless said otherwise
    ├── UserInputError              exit 2: the user's input is wrong
    │   ├── SpecError               a job spec is invalid; carries every SpecProblem at once
    │   ├── ConfigError             a profile or credentials file is wrong
    │   ├── PreflightError          submit's checks failed; carries every problem at once
    │   └── ObsUriError             not an OBS path (also a ValueError)
    ├── CompileError                a valid spec cannot become a cloud request (e.g. no code.obs)
    ├── StorageError                OBS said no or could not be reached; names code, bucket, key,
    │   │                           request id, never a secret
    │   ├── StorageAuthError        wrong AK/SK, expired token (403 SignatureDoesNotMatch, ...)
    │   ├── StorageNotFound         NoSuchKey, NoSuchBucket
    │   ├── StorageUnreachable      connection refused, DNS, time-out
    │   └── StorageIntegrityError   MD5 mismatch, unsafe key in a listing
    ├── ServiceError                ModelArts said no: its ModelArts.xxxx code, message, remedy,
    │   │                           request id, never a secret
    │   ├── ServiceAuthError        wrong AK/SK, expired token (401/403)
    │   ├── ServiceNotFound         no such job (404, or no job of that name)
    │   └── ServiceUnreachable      connection refused or dropped, time-out
    ├── RunnerError                 the local stage could not run or failed
    │   ├── NodeFailedError         a node exited non-zero; names the node
    │   └── RunTimeoutError         the stage timeout elapsed
    ├── MigrationError              a source file cannot be checked or rewritten
    ├── DataStageError              an OBS -> SFS stage is not complete: the source changed,
    │                               the volume is full, a file failed the verify pass
    └── PipelineError               the pipeline cannot go on: a closed gate, an unusable ledger
        ├── StageRefused            exit 2: the stage before it has not passed for this code
        │                           and spec (names the changed files and fields)
        └── LedgerError             the ledger is unreadable or from a newer majob
"""

from __future__ import annotations

from typing import NamedTuple

from majob.text import printable


class MajobError(Exception):
    """Root of every error majob raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def lines(self) -> list[str]:
        """The lines the CLI prints for this error, hint last."""
        return [self.message] + ([f"hint: {self.hint}"] if self.hint else [])


class UserInputError(MajobError):
    """The user's input (a spec, a flag, a path) is wrong: exit code 2."""

    exit_code = 2


class SpecProblem(NamedTuple):
    """One problem in a spec, located at ``file:line:col`` (1-based) and a dotted field path."""

    file: str
    line: int
    col: int
    path: str
    message: str

    def __str__(self) -> str:
        # line 0: the problem has no place in a file (a --set override, an unreadable file).
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        text = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        # One problem, one line: a key may hold a line break (a hostile or garbled spec).
        return text.translate(_LINE_BREAKS)


# Every character str.splitlines() breaks at, written as an escape instead.
_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


class SpecError(UserInputError):
    """A job spec is invalid. ``problems`` holds all of them, in file order; ``str()`` is one
    ``file:line:col: message`` line per problem, as the CLI prints them."""

    def __init__(self, problems: list[SpecProblem]) -> None:
        self.problems = sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class ConfigError(UserInputError):
    """A profile, credentials file or command-line setting is wrong."""


class ObsUriError(UserInputError, ValueError):
    """A string is not a well-formed OBS path."""


class PreflightError(UserInputError):
    """``majob submit``'s checks found problems; ``problems`` holds every one, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{len(self.problems)} {noun} found before submitting")

    def lines(self) -> list[str]:
        return [*self.problems, "nothing was uploaded or created"]


class CompileError(MajobError):
    """A valid spec cannot be turned into a ModelArts request."""


class StorageError(MajobError):
    """OBS refused a request or could not be reached.

    ``code`` is the OBS error code (``NoSuchKey``, ``SignatureDoesNotMatch``...), ``request_id``
    the server's request id when there is one. Messages never carry a secret key.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        bucket: str | None = None,
        key: str | None = None,
        request_id: str | None = None,
        status: int | None = None,
        hint: str | None = None,
    ) -> None:
        parts = [message]
        if code:
            parts.append(f"code={code}")
        if bucket:
            # The key is anyone's choice: escaped, it cannot split the line or drive the terminal.
            parts.append(f"object=obs://{bucket}/{printable(key or '')}")
        if status:
            parts.append(f"status={status}")
        if request_id:
            parts.append(f"request_id={request_id}")
        super().__init__("; ".join(parts), hint=hint)
        self.code = code
        self.bucket = bucket
        self.key = key
        self.request_id = request_id
        self.status = status


class StorageAuthError(StorageError):
    """Credentials were refused (wrong secret key, expired token, no permission)."""


class StorageNotFound(StorageError):
    """The bucket or the object does not exist."""


class StorageUnreachable(StorageError):
    """The endpoint could not be reached in time."""


class StorageIntegrityError(StorageError):
    """Data failed a check: MD5 mismatch, or a key that would escape the target directory."""


class ServiceError(MajobError):
    """ModelArts refused a request or could not be reached.

    ``code`` is the ModelArts error code (``ModelArts.2751``...), ``remedy`` the service's
    ``error_solution``, ``request_id`` the server's request id, ``status`` the HTTP status;
    ``message`` holds them all, ``detail`` only what was said (to quote in another error without
    repeating the rest). Messages never carry a secret key.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        remedy: str | None = None,
        request_id: str | None = None,
        status: int | None = None,
        hint: str | None = None,
    ) -> None:
        parts = [f"{code}: {message}" if code else message]
        if status:
            parts.append(f"status={status}")
        if request_id:
            parts.append(f"request_id={request_id}")
        super().__init__("; ".join(parts), hint=hint or remedy)
        self.detail = message
        self.code = code
        self.remedy = remedy
        self.request_id = request_id
        self.status = status


class ServiceAuthError(ServiceError):
    """Credentials were refused (wrong secret key, expired token, no permission)."""


class ServiceNotFound(ServiceError):
    """The job does not exist (or no job has that name)."""


class ServiceUnreachable(ServiceError):
    """The ModelArts endpoint could not be reached, dropped the connection or timed out."""


class RunnerError(MajobError):
    """The local stage could not start or did not succeed."""


class NodeFailedError(RunnerError):
    """A node of the local run exited non-zero."""

    def __init__(self, message: str, *, node: int, exit_code: int, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.node = node
        self.node_exit_code = exit_code


class RunTimeoutError(RunnerError):
    """The stage's timeout elapsed before every node finished."""


class MigrationError(MajobError):
    """A source file could not be checked or rewritten."""


class DataStageError(MajobError):
    """An OBS -> SFS stage did not end with a complete, verified copy; its manifest says
    incomplete or stale, and nothing is presented as staged."""


class PipelineError(MajobError):
    """The pipeline cannot go on (a stage that fails is a result, not an error)."""


class StageRefused(PipelineError):
    """A stage's gate is closed: the stage before it has not passed for this code and spec."""

    exit_code = 2


class LedgerError(PipelineError):
    """The ledger (``.majob/ledger.db`` at the project root) cannot be used; it is left as it is."""


__all__ = [
    "CompileError",
    "ConfigError",
    "DataStageError",
    "LedgerError",
    "MajobError",
    "MigrationError",
    "NodeFailedError",
    "ObsUriError",
    "PipelineError",
    "PreflightError",
    "RunTimeoutError",
    "RunnerError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceNotFound",
    "ServiceUnreachable",
    "SpecError",
    "SpecProblem",
    "StageRefused",
    "StorageAuthError",
    "StorageError",
    "StorageIntegrityError",
    "StorageNotFound",
    "StorageUnreachable",
    "UserInputError",
]
