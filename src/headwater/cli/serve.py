"""``headwater serve``: the ingestion and query server.

Also defines the server options (``server_options``) that ``headwater sample``
shares: each maps onto a :class:`~headwater.config.Settings` field and
defaults to ``None`` so the ``HEADWATER_*`` variable applies unless given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from headwater.config import Settings, parse_duration, parse_stale_producers
from headwater.errors import HeadwaterError

__all__ = ["serve", "server_options", "settings_from_options"]

F = TypeVar("F", bound=Callable[..., Any])

def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(value, f"--{param.name}".replace("_", "-"))
    except HeadwaterError as exc:
        raise click.BadParameter(str(exc)) from exc


def _stale_producers(ctx: click.Context, param: click.Parameter,
                     value: tuple[str, ...]) -> tuple[tuple[str, float], ...] | None:
    if not value:
        return None  # none given: HEADWATER_STALE_PRODUCERS or the default applies
    try:
        return parse_stale_producers(",".join(value), "--stale-producer")
    except HeadwaterError as exc:
        raise click.BadParameter(str(exc)) from exc


def _hosts(ctx: click.Context, param: click.Parameter,
           value: tuple[str, ...]) -> tuple[str, ...] | None:
    return value or None  # none given: HEADWATER_ALLOWED_HOSTS or the default applies


# (option declarations ending with the Settings field name, click keyword arguments).
_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--db", "db_url"), {"metavar": "URL", "help": "Store URL: sqlite:///path or "
                          "postgresql+psycopg://user@host/db. [HEADWATER_DB_URL]"}),
    (("--data-dir", "data_dir"), {"type": click.Path(file_okay=False, path_type=Path),
                                  "help": "Folder of the default SQLite store. "
                                  "[HEADWATER_DATA_DIR; .headwater]"}),
    (("--host", "host"), {"help": "Address to bind. [HEADWATER_HOST; 127.0.0.1]"}),
    (("--port", "port"), {"type": int, "help": "Port to listen on. [HEADWATER_PORT; 5000]"}),
    (("--api-key", "api_key"), {"help": "A bearer token with every scope; with it (or any "
                                "token from `headwater token create`) requests need a token. "
                                "[HEADWATER_API_KEY]"}),
    (("--public-reads/--no-public-reads", "public_reads"), {
        "default": None, "help": "Reads need no token even when tokens exist. "
        "[HEADWATER_PUBLIC_READS; off]"}),
    (("--audit-file", "audit_file"), {"type": click.Path(dir_okay=False, path_type=Path),
                                      "help": "Also append each audit row to this file as "
                                      "a JSON line. [HEADWATER_AUDIT_FILE]"}),
    (("--audit-reads/--no-audit-reads", "audit_reads"), {
        "default": None, "help": "Audit reads (GET/HEAD) too, not only writes and refusals. "
        "[HEADWATER_AUDIT_READS; off]"}),
    (("--audit-retention", "audit_retention"), {
        "metavar": "DURATION", "callback": _duration, "help": "Prune audit rows older than "
        "this (90d, 12h; at least 1d), hourly. [HEADWATER_AUDIT_RETENTION; keep all]"}),
    (("--retention", "retention"), {
        "metavar": "DURATION", "callback": _duration, "help": "Delete runs and their raw "
        "events older than this (90d), in the background, hourly; never the current graph. "
        "[HEADWATER_RETENTION; keep all]"}),
    (("--allowed-host", "--allowed-hosts", "allowed_hosts"), {
        "multiple": True, "callback": _hosts, "metavar": "HOST", "help": "A Host header value "
        "to serve (repeatable; .example.com matches subdomains, * any); others get 400. "
        "[HEADWATER_ALLOWED_HOSTS, comma-separated; the bind address and localhost names]"}),
    (("--cors-origin", "--cors-origins", "cors_origins"), {
        "multiple": True, "callback": _hosts, "metavar": "ORIGIN", "help": "A web origin "
        "(https://host[:port]) whose pages may call the API from the browser (repeatable). "
        "[HEADWATER_CORS_ORIGINS, comma-separated; none: CORS off]"}),
    (("--header-timeout", "header_timeout"), {
        "type": click.FloatRange(min=0, min_open=True), "metavar": "SECONDS",
        "help": "Seconds a connection may take to send a request's headers. "
        "[HEADWATER_HEADER_TIMEOUT; 10]"}),
    (("--body-timeout", "body_timeout"), {
        "type": click.FloatRange(min=0, min_open=True), "metavar": "SECONDS",
        "help": "Seconds a request may take to send its body, after its headers. "
        "[HEADWATER_BODY_TIMEOUT; 60]"}),
    (("--max-client-connections", "max_client_connections"), {
        "type": click.IntRange(min=1), "help": "Open connections one client address may hold; "
        "more are answered 503 and closed. [HEADWATER_MAX_CLIENT_CONNECTIONS; 100]"}),
    (("--max-body-bytes", "max_body_bytes"), {"type": int, "help": "Largest request body "
                                              "accepted, after gzip. "
                                              "[HEADWATER_MAX_BODY_BYTES; 10485760]"}),
    (("--log-level", "log_level"), {"type": click.Choice(
        ["critical", "error", "warning", "info", "debug"], case_sensitive=False),
        "help": "Server log level. [HEADWATER_LOG_LEVEL; info]"}),
    (("--access-log/--no-access-log", "access_log"), {"default": None,
                                                      "help": "Log every request. "
                                                      "[HEADWATER_ACCESS_LOG; off]"}),
    (("--workers", "workers"), {"type": click.IntRange(min=1), "help": "Server processes "
                                "sharing the port; more use more cores for ingestion. "
                                "[HEADWATER_WORKERS; 1]"}),
    (("--connect-url", "connect_url"), {"metavar": "URL", "help": "Poll this Kafka Connect "
                                        "REST API and store its connectors' lineage (one worker "
                                        "only; docs/connect.md). [HEADWATER_CONNECT_URL]"}),
    (("--connect-bootstrap-servers", "connect_bootstrap_servers"), {
        "metavar": "LIST", "help": "The Kafka cluster the Connect workers use, naming topics. "
        "[HEADWATER_CONNECT_BOOTSTRAP_SERVERS]"}),
    (("--connect-namespace", "connect_namespace"), {
        "metavar": "NAME", "help": "Job namespace of the connectors. "
        "[HEADWATER_CONNECT_NAMESPACE; kafka-connect://<host:port of --connect-url>]"}),
    (("--connect-interval", "connect_interval"), {
        "metavar": "DURATION", "callback": _duration, "help": "Time between polls of "
        "--connect-url (10s, 1m). [HEADWATER_CONNECT_INTERVAL; 10s]"}),
    (("--connect-heartbeat", "connect_heartbeat"), {
        "metavar": "DURATION", "callback": _duration, "help": "Send RUNNING for a live "
        "connector whose run has been silent this long (10m). "
        "[HEADWATER_CONNECT_HEARTBEAT; off]"}),
    (("--connect-state", "connect_state"), {
        "type": click.Path(dir_okay=False, path_type=Path), "help": "The poller's state file. "
        "[HEADWATER_CONNECT_STATE; <data-dir>/connect-state.json]"}),
    (("--oidc-issuer", "oidc_issuer"), {
        "metavar": "URL", "help": "Also admit bearer JWTs this OpenID Connect issuer signed, "
        "checked against its published keys (docs/server.md). [HEADWATER_OIDC_ISSUER]"}),
    (("--oidc-audience", "oidc_audience"), {
        "metavar": "AUD", "help": "The aud claim such a JWT must name (needed with "
        "--oidc-issuer). [HEADWATER_OIDC_AUDIENCE]"}),
    (("--oidc-scopes-claim", "oidc_scopes_claim"), {
        "metavar": "CLAIM", "help": "The claim granting ingest, read and admin. "
        "[HEADWATER_OIDC_SCOPES_CLAIM; scope]"}),
    (("--oidc-namespaces-claim", "oidc_namespaces_claim"), {
        "metavar": "CLAIM", "help": "A claim listing the namespaces a JWT sees. "
        "[HEADWATER_OIDC_NAMESPACES_CLAIM; none: all]"}),
    (("--oidc-name-claim", "oidc_name_claim"), {
        "metavar": "CLAIM", "help": "The claim naming the caller in the audit log. "
        "[HEADWATER_OIDC_NAME_CLAIM; sub]"}),
    (("--namespace-rules", "namespace_rules"), {
        "type": click.Path(dir_okay=False, path_type=Path), "metavar": "FILE",
        "help": "A TOML file of namespace rules mapping every producer's dataset names to "
        "one spelling (docs/namespaces.md). [HEADWATER_NAMESPACE_RULES; none]"}),
    (("--stale-producer", "--stale-producers", "stale_producers"), {
        "multiple": True, "callback": _stale_producers, "metavar": "PATTERN=DURATION",
        "help": "Producers (URI pattern, * any text) known to send periodic RUNNING events: "
        "a silent run of one shows as stale after DURATION (repeatable; 'none': never; "
        "docs/server.md). [HEADWATER_STALE_PRODUCERS, comma-separated; the OpenLineage "
        "Flink integration and headwater's agent, 5m]"}),
    (("--drift-webhook", "drift_webhook"), {
        "metavar": "URL", "help": "POST each new or changed schema drift, with its impact, "
        "to this URL; retried with backoff, never holding up ingestion (docs/server.md). "
        "[HEADWATER_DRIFT_WEBHOOK]"}),
    (("--drift-webhook-breaking-only/--no-drift-webhook-breaking-only",
      "drift_webhook_breaking_only"), {
        "default": None, "help": "Only breaking drifts go to the webhook. "
        "[HEADWATER_DRIFT_WEBHOOK_BREAKING_ONLY; off]"}),
    (("--drift-webhook-secret", "drift_webhook_secret"), {
        "metavar": "SECRET", "help": "Sign each webhook POST (X-Headwater-Signature, "
        "HMAC-SHA256). [HEADWATER_DRIFT_WEBHOOK_SECRET; unsigned]"}),
]


def server_options(command: F) -> F:
    """Decorate a click command with every server setting as an option."""
    for declarations, kwargs in reversed(_OPTIONS):
        command = click.option(*declarations, **kwargs)(command)
    return command


def settings_from_options(options: Mapping[str, Any]) -> Settings:
    """Settings from the environment, overridden by the options that were given."""
    fields = {declarations[-1] for declarations, _ in _OPTIONS}
    return Settings.from_env(**{k: v for k, v in options.items() if k in fields})


@click.command()
@server_options
def serve(**options: Any) -> None:
    """Serve the OpenLineage ingestion API and the read API until interrupted.

    Producers post to /api/v1/lineage (one event) or /api/v1/lineage/batch
    (a JSON array). Every option can also be set by its HEADWATER_* environment
    variable; the option wins.
    """
    from headwater.server.run import redact_url, run_server

    try:
        settings = settings_from_options(options)
        click.echo(
            f"headwater serving {settings.base_url} "
            f"(store: {redact_url(settings.database_url)}; "
            f"{'API key set' if settings.api_key else 'open unless tokens exist'})",
            err=True,
        )
        run_server(settings)
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
