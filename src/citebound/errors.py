"""The one exception tree of citebound.

Stages never raise to their caller for bad *input*: they return a result with status FAILED
and a reason code. Exceptions are for programming and configuration errors, and for layers
(store, API) where a Python caller needs to branch::

    CiteboundError
    ├── ConfigError            bad policy / config file; names the offending field
    ├── ContractError          an object does not satisfy a stage contract (library misuse)
    ├── PipelineOrderError     a stage ran out of order or broke a view/selection invariant
    ├── StageError             a stage failed; carries stage + reason_code
    │   └── ProviderError      an LLM provider failed; carries provider, status, transient
    ├── StoreError             the document store or an index cannot be read or written
    ├── AuditError             an audit sink cannot append (the request must not be answered)
    ├── AccessDenied           an API key lacks the role or collection for a request
    └── NotFound               a document, chunk or record does not exist for this caller
"""

from __future__ import annotations


class CiteboundError(Exception):
    """Base class of every error citebound raises on purpose."""


class ConfigError(CiteboundError):
    """A policy or configuration value is missing or invalid."""

    def __init__(self, message: str, *, field: str | None = None, source: str | None = None):
        self.field = field
        self.source = source
        super().__init__(message)


class ContractError(CiteboundError):
    """An object handed to a stage does not satisfy its contract."""


class PipelineOrderError(CiteboundError):
    """A stage was run out of order, or a stage broke a state invariant."""

    def __init__(self, message: str, *, stage: str | None = None):
        self.stage = stage
        super().__init__(message)


class StageError(CiteboundError):
    """A stage could not complete; `reason_code` is one of `ReasonCode`. `model_calls` holds
    the records (`ModelCallRecord`) of model calls the stage made before it failed, so the
    request's audit record still lists them."""

    def __init__(
        self,
        message: str,
        *,
        stage: str,
        reason_code: str,
        model_calls: tuple[object, ...] = (),
    ):
        self.stage = stage
        self.reason_code = reason_code
        self.model_calls = model_calls
        super().__init__(message)


class ProviderError(StageError):
    """An LLM provider call failed. `transient` says whether a retry may help."""

    def __init__(
        self,
        message: str,
        *,
        reason_code: str,
        provider: str,
        status: int | None = None,
        transient: bool = False,
        retry_after_s: float | None = None,
    ):
        self.provider = provider
        self.status = status
        self.transient = transient
        self.retry_after_s = retry_after_s
        super().__init__(message, stage="execute", reason_code=reason_code)


class StoreError(CiteboundError):
    """The store or an index cannot be opened, read or written."""


class AuditError(CiteboundError):
    """An audit sink failed to append a record."""


class AccessDenied(CiteboundError):
    """The caller's key does not grant this role or collection."""

    def __init__(self, message: str, *, status: int = 403):
        self.status = status
        super().__init__(message)


class NotFound(CiteboundError):
    """The object asked for does not exist, or the caller may not see it (same answer, so
    a caller cannot probe other collections)."""
