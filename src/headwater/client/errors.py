"""What :mod:`headwater.client` raises: one branch of the headwater exception tree.

Every error the client raises derives from :class:`ClientError`, itself a
:class:`~headwater.errors.HeadwaterError`; httpx's exceptions are translated
here and never escape. An answer's status picks the class, and the server's
error body (``{"error", "field", "retriable"}``) fills its attributes::

    HeadwaterError                        (headwater.errors)
    └── ClientError                       anything the client could not do
        ├── ServerUnreachable             no connection, after the retries
        ├── RequestTimeout                no answer within the timeout, after the retries
        ├── UnexpectedAnswer              an answer that does not match its model
        └── APIError                      the server answered with an error status
            ├── BadRequest          400   the request or event is invalid (``field`` says where)
            ├── Unauthorized        401   no token, or a wrong one
            ├── Forbidden           403   the token lacks the scope or namespace
            ├── NotFound            404   also a headwater.errors.NotFoundError
            ├── Conflict            409
            ├── PayloadTooLarge     413
            ├── Unprocessable       422   the database refused what was sent; do not resend
            ├── RateLimited         429   retried first; raised when retries run out
            └── ServerError         5xx   502/503/504 are retried first
"""

from __future__ import annotations

from headwater.errors import HeadwaterError, NotFoundError

__all__ = [
    "APIError",
    "BadRequest",
    "ClientError",
    "Conflict",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RequestTimeout",
    "ServerError",
    "ServerUnreachable",
    "Unauthorized",
    "UnexpectedAnswer",
    "Unprocessable",
    "api_error",
]


class ClientError(HeadwaterError):
    """Base of everything :mod:`headwater.client` raises."""


class ServerUnreachable(ClientError):
    """No connection to the server could be made (after the configured retries)."""


class RequestTimeout(ClientError):
    """The server did not answer within the timeout (after the configured retries)."""


class UnexpectedAnswer(ClientError):
    """An answer that is not what the operation's model describes (``path`` says where)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{message} (at {path or 'the answer'})")
        self.path = path


class APIError(ClientError):
    """The server answered with an error status; its error body is kept apart."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        field: str | None = None,
        retriable: bool | None = None,
        method: str = "",
        url: str = "",
    ) -> None:
        super().__init__(f"{message} (HTTP {status_code})")
        self.message = message
        self.status_code = status_code
        self.field = field
        self.retriable = retriable
        self.method = method
        self.url = url


class BadRequest(APIError):
    """400: the request is invalid; ``field`` names the parameter or the event's JSON path."""


class Unauthorized(APIError):
    """401: the server has tokens and the request carried none, or a wrong one."""


class Forbidden(APIError):
    """403: the token lacks the scope or the namespace the operation needs."""


class NotFound(APIError, NotFoundError):
    """404: the namespace, dataset, job, run, token or node does not exist."""


class Conflict(APIError):
    """409: the write conflicts with what the server holds."""


class PayloadTooLarge(APIError):
    """413: the body is over the server's limit (before or after gzip)."""


class Unprocessable(APIError):
    """422: the database refused what was written; sending it again fails again."""


class RateLimited(APIError):
    """429: too many requests; raised once the retries are used up."""


class ServerError(APIError):
    """5xx: the server failed; 502, 503 and 504 are retried before this is raised."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def api_error(
    status_code: int,
    message: str,
    *,
    field: str | None = None,
    retriable: bool | None = None,
    method: str = "",
    url: str = "",
) -> APIError:
    """The :class:`APIError` subclass for ``status_code``, filled from an error body."""
    kind = _BY_STATUS.get(status_code)
    if kind is None:
        kind = ServerError if status_code >= 500 else APIError
    return kind(
        message, status_code=status_code, field=field, retriable=retriable, method=method, url=url
    )
