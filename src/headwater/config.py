"""Server-side settings: the one place that reads ``os.environ``.

Every setting has a ``HEADWATER_*`` environment variable and, for ``headwater
serve``, a command-line option that overrides it:

==========================  ====================================  ================================
setting                     environment variable                  meaning (default)
==========================  ====================================  ================================
``db_url``                  ``HEADWATER_DB_URL``                  SQLAlchemy URL of the store (the
                                                                  SQLite file
                                                                  ``<data_dir>/headwater.db``)
``data_dir``                ``HEADWATER_DATA_DIR``                folder of the default SQLite
                                                                  file (``.headwater``)
``host``                    ``HEADWATER_HOST``                    address ``serve`` binds
                                                                  (``127.0.0.1``)
``port``                    ``HEADWATER_PORT``                    port ``serve`` listens on
                                                                  (``5000``, as Marquez)
``api_key``                 ``HEADWATER_API_KEY``                 a bearer token holding every
                                                                  scope (none); with it, or any
                                                                  stored token, requests need a
                                                                  token
``public_reads``            ``HEADWATER_PUBLIC_READS``            reads need no token even when
                                                                  tokens exist (``false``)
``audit_file``              ``HEADWATER_AUDIT_FILE``              also append each audit row to
                                                                  this file as a JSON line (none)
``audit_reads``             ``HEADWATER_AUDIT_READS``             audit reads (GET/HEAD) too, not
                                                                  only writes and refusals
                                                                  (``false``)
``audit_retention``         ``HEADWATER_AUDIT_RETENTION``         prune audit rows older than
                                                                  this, e.g. ``90d``, ``12h``
                                                                  (none: keep every row); at least
                                                                  ``1d``
``retention``               ``HEADWATER_RETENTION``               delete runs and their raw events
                                                                  older than this, e.g. ``90d``,
                                                                  in the background (none: keep
                                                                  everything)
``allowed_hosts``           ``HEADWATER_ALLOWED_HOSTS``           Host header values served,
                                                                  comma-separated;
                                                                  ``.example.com`` matches
                                                                  subdomains, ``*`` any (the bind
                                                                  address and localhost names)
``cors_origins``            ``HEADWATER_CORS_ORIGINS``            web origins
                                                                  (``https://host[:port]``) whose
                                                                  pages may call the API,
                                                                  comma-separated (none: CORS off)
``header_timeout``          ``HEADWATER_HEADER_TIMEOUT``          seconds a connection may take to
                                                                  send a request's headers
                                                                  (``10``)
``body_timeout``            ``HEADWATER_BODY_TIMEOUT``            seconds a request may take to
                                                                  send its body after its headers
                                                                  (``60``)
``max_client_connections``  ``HEADWATER_MAX_CLIENT_CONNECTIONS``  open connections one client
                                                                  address may hold (``100``)
``max_body_bytes``          ``HEADWATER_MAX_BODY_BYTES``          largest request body, after gzip
                                                                  decompression (``10485760``, 10
                                                                  MB)
``log_level``               ``HEADWATER_LOG_LEVEL``               server log level (``info``)
``access_log``              ``HEADWATER_ACCESS_LOG``              log every request (``false``)
``workers``                 ``HEADWATER_WORKERS``                 server processes sharing the
                                                                  port (``1``); more use more
                                                                  cores for ingestion
``connect_url``             ``HEADWATER_CONNECT_URL``             a Kafka Connect REST API the
                                                                  server polls for connector
                                                                  lineage (none: no poller); one
                                                                  worker only
``connect_bootstrap_servers``  ``HEADWATER_CONNECT_BOOTSTRAP_SERVERS``  the Kafka cluster of the
                                                                  Connect workers, naming topics
                                                                  (none)
``connect_namespace``       ``HEADWATER_CONNECT_NAMESPACE``       job namespace of the connectors
                                                                  (``kafka-connect://host:port``
                                                                  of ``connect_url``)
``connect_interval``        ``HEADWATER_CONNECT_INTERVAL``        time between polls, e.g.
                                                                  ``10s`` (``10s``)
``connect_state``           ``HEADWATER_CONNECT_STATE``           the poller's state file
                                                                  (``<data_dir>/connect-state.json``)
``connect_heartbeat``       ``HEADWATER_CONNECT_HEARTBEAT``       send RUNNING for a live
                                                                  connector silent this long, e.g.
                                                                  ``10m`` (none: only changes)
``oidc_issuer``             ``HEADWATER_OIDC_ISSUER``             also admit bearer JWTs this
                                                                  OpenID Connect issuer signed
                                                                  (none); https, or http on
                                                                  loopback
``oidc_audience``           ``HEADWATER_OIDC_AUDIENCE``           the ``aud`` such a JWT must name
                                                                  (needed with ``oidc_issuer``)
``oidc_scopes_claim``       ``HEADWATER_OIDC_SCOPES_CLAIM``       the claim granting ingest, read,
                                                                  admin (``scope``)
``oidc_namespaces_claim``   ``HEADWATER_OIDC_NAMESPACES_CLAIM``   a claim listing the namespaces
                                                                  the JWT sees (none: all)
``oidc_name_claim``         ``HEADWATER_OIDC_NAME_CLAIM``         the claim naming the caller in
                                                                  the audit log (``sub``)
``namespace_rules``         ``HEADWATER_NAMESPACE_RULES``         a TOML file of namespace rules
                                                                  mapping every producer's dataset
                                                                  names to one spelling (none:
                                                                  names as sent); see
                                                                  docs/namespaces.md
``stale_producers``         ``HEADWATER_STALE_PRODUCERS``         producers known to send
                                                                  periodic RUNNING events, as
                                                                  ``PATTERN=DURATION`` items,
                                                                  comma-separated; a silent run of
                                                                  one is shown stale after
                                                                  DURATION (the OpenLineage Flink
                                                                  integration and headwater's
                                                                  agent, ``5m``); ``none``: no
                                                                  stale runs; see docs/server.md
``drift_webhook``           ``HEADWATER_DRIFT_WEBHOOK``           POST each new or changed schema
                                                                  drift, with its impact, to this
                                                                  URL (none); retried with backoff
``drift_webhook_breaking_only``  ``HEADWATER_DRIFT_WEBHOOK_BREAKING_ONLY``  only breaking drifts
                                                                  go to the webhook (``false``)
``drift_webhook_secret``    ``HEADWATER_DRIFT_WEBHOOK_SECRET``    sign each webhook POST with
                                                                  HMAC-SHA256 under this secret
                                                                  (none: unsigned)
==========================  ====================================  ================================

A test keeps this table, :class:`Settings` and ``headwater serve --help`` in
step.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_BODY_BYTES", "DEFAULT_PORT", "ENV_PREFIX", "MIN_AUDIT_RETENTION", "Settings",
    "parse_duration", "parse_stale_producers",
]

ENV_PREFIX = "HEADWATER_"
DEFAULT_PORT = 5000
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_LOG_LEVELS = {"critical", "error", "warning", "info", "debug", "trace"}
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: The audit log's triggers refuse to delete a row younger than this (migration 0008),
#: so a retention shorter than it could never be carried out.
MIN_AUDIT_RETENTION = 86400.0


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start; build with :meth:`from_env`.

    ``db_url`` left as ``None`` means "the SQLite file in ``data_dir``"; read
    the resolved value through :attr:`database_url`.
    """

    db_url: str | None = None
    data_dir: Path = Path(".headwater")
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    api_key: str | None = None
    public_reads: bool = False
    audit_file: Path | None = None
    audit_reads: bool = False
    audit_retention: float | None = None
    retention: float | None = None
    allowed_hosts: tuple[str, ...] | None = None
    cors_origins: tuple[str, ...] | None = None
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_client_connections: int = 100
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    log_level: str = "info"
    access_log: bool = False
    workers: int = 1
    connect_url: str | None = None
    connect_bootstrap_servers: str | None = None
    connect_namespace: str | None = None
    connect_interval: float = 10.0
    connect_state: Path | None = None
    connect_heartbeat: float | None = None
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_scopes_claim: str = "scope"
    oidc_namespaces_claim: str | None = None
    oidc_name_claim: str = "sub"
    namespace_rules: Path | None = None
    stale_producers: tuple[tuple[str, float], ...] | None = None
    drift_webhook: str | None = None
    drift_webhook_breaking_only: bool = False
    drift_webhook_secret: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, got {self.port}")
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        if self.max_body_bytes <= 0:
            raise ConfigError(f"max_body_bytes must be positive, got {self.max_body_bytes}")
        if self.log_level.lower() not in _LOG_LEVELS:
            raise ConfigError(
                f"log_level must be one of {sorted(_LOG_LEVELS)}, got {self.log_level!r}"
            )
        if self.audit_retention is not None and self.audit_retention < MIN_AUDIT_RETENTION:
            raise ConfigError("audit_retention must be at least 1d (the audit log's triggers "
                              f"keep every row younger than a day), got {self.audit_retention:g}s")
        for name in ("header_timeout", "body_timeout"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_client_connections < 1:
            raise ConfigError("max_client_connections must be at least 1, "
                              f"got {self.max_client_connections}")
        if isinstance(self.allowed_hosts, str):
            object.__setattr__(self, "allowed_hosts", _split_hosts(self.allowed_hosts))
        if self.allowed_hosts is not None:
            hosts = tuple(h.strip().lower() for h in self.allowed_hosts if h.strip())
            if not hosts:
                raise ConfigError("allowed_hosts names no host; use '*' to allow any")
            object.__setattr__(self, "allowed_hosts", hosts)
        if isinstance(self.cors_origins, str):
            object.__setattr__(self, "cors_origins", _split_hosts(self.cors_origins))
        if self.cors_origins is not None:
            object.__setattr__(self, "cors_origins",
                               tuple(_origin(o) for o in self.cors_origins) or None)
        if self.connect_url == "":
            object.__setattr__(self, "connect_url", None)
        if self.connect_url and self.workers > 1:
            raise ConfigError("connect_url is polled by one process: serve it with one worker, "
                              "or run `headwater connect watch` beside the server")
        if not self.connect_interval > 0:
            raise ConfigError(f"connect_interval must be positive, got {self.connect_interval}")
        if self.oidc_issuer == "":
            object.__setattr__(self, "oidc_issuer", None)
        if self.oidc_issuer is not None:
            _check_issuer(self.oidc_issuer)
            if not self.oidc_audience:
                raise ConfigError("oidc_audience must be set with oidc_issuer: the aud claim "
                                  "a token must name, so tokens for other services fail")
        if self.drift_webhook == "":
            object.__setattr__(self, "drift_webhook", None)
        if self.drift_webhook is not None:
            _check_webhook(self.drift_webhook)
        if self.drift_webhook_secret == "":
            object.__setattr__(self, "drift_webhook_secret", None)
        if self.api_key == "":
            # An empty key would make every request "authenticated"; treat as unset.
            object.__setattr__(self, "api_key", None)

    @property
    def database_url(self) -> str:
        """The store URL: ``db_url`` or the SQLite file inside ``data_dir``."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{self.data_dir / 'headwater.db'}"

    @property
    def connect_state_path(self) -> Path:
        """The poller's state file: ``connect_state`` or ``connect-state.json`` in ``data_dir``."""
        return self.connect_state or self.data_dir / "connect-state.json"

    @property
    def base_url(self) -> str:
        """The URL clients use to reach ``serve`` with these settings."""
        host = "127.0.0.1" if self.host in {"0.0.0.0", "::", ""} else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``HEADWATER_*`` variables, then apply non-``None`` ``overrides``.

        ``env`` defaults to ``os.environ``; tests pass their own mapping.
        """
        source = os.environ if env is None else env
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            raw = source.get(ENV_PREFIX + field.name.upper())
            if raw is not None:
                values[field.name] = _convert(field.name, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied (``None`` values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


def _check_issuer(issuer: str) -> None:
    """An issuer URL is https, or http on a loopback address (keys fetched in clear
    text from elsewhere could be swapped on the way)."""
    from urllib.parse import urlsplit

    parts = urlsplit(issuer)
    loopback = parts.hostname in {"localhost", "127.0.0.1", "::1"}
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise ConfigError(f"oidc_issuer must be an https URL (or http on loopback), "
                          f"got {issuer!r}")


def _check_webhook(url: str) -> None:
    """A webhook URL is http(s) with a host: a typo fails at start, not at the first drift."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"drift_webhook must be an http or https URL, got {url!r}")


def _convert(name: str, raw: str) -> Any:
    """Turn one environment string into the field's type, naming the variable on error."""
    var = ENV_PREFIX + name.upper()
    if name in {"audit_retention", "connect_interval", "connect_heartbeat"}:
        return parse_duration(raw, var)
    if name in {"allowed_hosts", "cors_origins"}:
        return _split_hosts(raw)
    if name == "stale_producers":
        return parse_stale_producers(raw, var)
    if name in {"header_timeout", "body_timeout"}:
        try:
            return float(raw.strip())
        except ValueError:
            raise ConfigError(f"{var} must be a number of seconds, got {raw!r}") from None
    if name in {"port", "max_body_bytes", "workers", "max_client_connections"}:
        try:
            return int(raw.strip())
        except ValueError:
            raise ConfigError(f"{var} must be an integer, got {raw!r}") from None
    if name in {"access_log", "public_reads", "audit_reads", "drift_webhook_breaking_only"}:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ConfigError(f"{var} must be true or false, got {raw!r}")
    if name in {"data_dir", "audit_file", "connect_state", "namespace_rules"}:
        return Path(raw)
    return raw


def parse_duration(raw: str, what: str = "duration") -> float:
    """Seconds in ``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or a bare number of seconds."""
    text = raw.strip().lower()
    unit = _DURATION_UNITS.get(text[-1:]) if text else None
    number = text[:-1] if unit is not None else text
    try:
        value = float(number) * (unit or 1)
    except ValueError:
        raise ConfigError(f"{what} must be a duration such as 90d, 12h or 30m, "
                          f"got {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"{what} must be positive, got {raw!r}")
    return value


def parse_stale_producers(raw: str, what: str = "stale_producers") -> tuple[tuple[str, float], ...]:
    """``(pattern, seconds)`` pairs from ``PATTERN=DURATION`` items separated by commas;
    ``none`` is no pair at all (no run is ever shown stale)."""
    if raw.strip().lower() == "none":
        return ()
    pairs = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        pattern, sep, duration = item.rpartition("=")
        if not sep or not pattern.strip():
            raise ConfigError(f"{what} items are PRODUCER_PATTERN=DURATION, got {item!r}")
        pairs.append((pattern.strip(), parse_duration(duration, what)))
    if not pairs:
        raise ConfigError(f"{what} names no producer; use 'none' for no stale runs at all")
    return tuple(pairs)


def _split_hosts(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _origin(raw: str) -> str:
    """A web origin as browsers send it (``scheme://host[:port]``); anything else refused."""
    value = raw.strip().rstrip("/").lower()
    scheme, sep, rest = value.partition("://")
    if (scheme not in ("http", "https") or not sep or not rest
            or any(c in rest for c in "/?#@*")):
        raise ConfigError(f"a CORS origin is scheme://host[:port] (http or https; no path, "
                          f"no wildcard), got {raw!r}")
    return value
