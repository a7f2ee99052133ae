"""Build the headwater FastAPI application: ``create_app(settings, store=None)``.

There is no module-level app: every caller (``headwater serve``, each test)
builds its own from plain arguments. Route modules live in
``headwater.server.routes``; they are included in :func:`_include_routes`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from headwater import __version__
from headwater.config import Settings
from headwater.server.handlers import install_handlers

if TYPE_CHECKING:
    from headwater.server.access import Access
    from headwater.server.connect_poller import ConnectPoller
    from headwater.server.drift_webhook import DriftWebhook
    from headwater.server.oidc import JwtVerifier
    from headwater.store import Store

__all__ = ["create_app", "open_store"]

logger = logging.getLogger(__name__)

def open_store(settings: Settings) -> Store:
    """Open (and migrate) the store ``settings`` name, creating a SQLite file's folder."""
    from headwater.store import Store  # SQLAlchemy is imported only by the server side

    url = settings.database_url
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        from pathlib import Path

        Path(url[len("sqlite:///") :]).expanduser().parent.mkdir(parents=True, exist_ok=True)
    store = Store.open(url, migrate=True)
    if settings.namespace_rules is not None:
        from headwater.store.namespace_rules import load_rules

        try:
            rules = load_rules(settings.namespace_rules)
        except BaseException:
            store.close()
            raise
    else:
        rules = None
    changed = store.use_namespace_rules(rules)
    if changed is not None:
        logger.warning("%s", changed)
    return store


def create_app(settings: Settings, store: Store | None = None) -> FastAPI:
    """The ASGI app serving the ingestion and read APIs.

    With ``store=None`` the app opens the store named by ``settings`` now (so a
    bad URL fails at start-up, not on the first request) and closes it at
    shutdown; a store passed in belongs to the caller, who closes it.
    """
    owns_store = store is None
    active_store = open_store(settings) if store is None else store

    access = _access(settings, active_store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        access.audit.start()
        poller = _connect_poller(settings, active_store)
        retention = None
        if settings.retention is not None:
            from headwater.server.retention_job import RetentionJob

            retention = RetentionJob(active_store, settings.retention)
            retention.start()
        webhook = _drift_webhook(settings, active_store, app)
        yield
        if webhook is not None:
            webhook.close()
        if poller is not None:
            poller.close()  # before the store closes: a poll may be writing
        if retention is not None:
            retention.close()
        access.audit.close()  # the rows still queued are written before the store closes
        if owns_store:
            logger.info("closing store")
            active_store.close()

    app = FastAPI(
        title="headwater",
        version=__version__,
        summary="OpenLineage-native lineage server with a Marquez-compatible API.",
        lifespan=lifespan,
        # /docs and /redoc are served from the package by the UI (headwater.ui.api_docs),
        # not FastAPI's pages, which load their scripts from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.store = active_store
    app.state.access = access
    # Records' JSON reused between answers while the store does not change.
    from headwater.server.record_fragments import RecordFragments

    app.state.record_fragments = RecordFragments()
    install_handlers(app)
    _include_routes(app)
    # The ingestion POSTs are served by one ASGI handler in front of the routing
    # (see server/ingest_endpoint.py); their router is documented, not served.
    from headwater.server.ingest_endpoint import IngestEndpoint
    from headwater.server.openapi import document_only
    from headwater.server.routes import lineage

    app.add_middleware(IngestEndpoint)
    # ETags and 304s for version, run and lineage answers, inside the access gate (an
    # ETag depends on the namespaces the request's token sees), and gzip around them.
    from headwater.server.compression import Compression
    from headwater.server.etags import ETags, document_etags

    app.add_middleware(ETags, store=active_store)
    document_etags(app)
    app.add_middleware(Compression)
    # Around the ingestion POSTs too, so every answer the app gives is counted and timed.
    from headwater.server.metrics import install_metrics

    install_metrics(app, active_store)
    # Added last, so outermost: every request, the ingestion POSTs included, passes it.
    from headwater.server.access import AccessGate

    app.add_middleware(AccessGate, access=access)
    # Outside the gate: a dataset's raw name is rewritten to its own before the gate
    # checks the namespace it lives in.
    from headwater.server.dataset_aliases import DatasetAliases

    app.add_middleware(DatasetAliases, store=active_store)
    # Outside the gate too, so its refusals carry the headers as well.
    from headwater.server.security_headers import SecurityHeaders

    app.add_middleware(SecurityHeaders)
    if settings.cors_origins:
        # Outside the gate: a browser's preflight (OPTIONS) carries no token. Tokens travel
        # in the Authorization header, never in cookies, so credentials stay off.
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware, allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "HEAD", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Content-Encoding"],
            allow_credentials=False, max_age=600,
        )
    document_only(app, lineage.router.routes)
    from headwater.ui import mount_ui  # the web UI last, so every API route matches first

    mount_ui(app)
    return app


def _connect_poller(settings: Settings, store: Store) -> ConnectPoller | None:
    """``serve --connect-url``: the Kafka Connect watcher on a thread, writing to ``store``."""
    if not settings.connect_url:
        return None
    from headwater.server.connect_poller import ConnectPoller

    poller = ConnectPoller(settings, store)
    poller.start()
    return poller


def _drift_webhook(settings: Settings, store: Store, app: FastAPI) -> DriftWebhook | None:
    """``serve --drift-webhook``: the worker posting queued drifts, woken by each commit."""
    if not settings.drift_webhook:
        return None
    from headwater.server.drift_webhook import DriftWebhook

    hook = DriftWebhook(store, settings.drift_webhook, secret=settings.drift_webhook_secret,
                        breaking_only=settings.drift_webhook_breaking_only,
                        metrics=app.state.metrics)
    counted = store.on_commit

    def committed(events: int, seconds: float) -> None:
        if counted is not None:
            counted(events, seconds)
        hook.wake()

    store.on_commit = committed
    hook.start()
    return hook


def _access(settings: Settings, store: Store) -> Access:
    from headwater.server.access import Access, TokenCache
    from headwater.server.audit import AuditLog

    cache = TokenCache(store.engine, settings.api_key)
    # Loaded now, so a store without the tokens table fails at start-up, and a store
    # that goes away later leaves the server judging by the tokens it last read.
    cache.refresh()
    return Access(
        tokens=cache,
        audit=AuditLog(store.engine, mirror=settings.audit_file,
                       retention=settings.audit_retention),
        public_reads=settings.public_reads,
        audit_reads=settings.audit_reads,
        jwt=_jwt_verifier(settings),
    )


def _jwt_verifier(settings: Settings) -> JwtVerifier | None:
    if settings.oidc_issuer is None or settings.oidc_audience is None:
        return None
    from headwater.server.oidc import JwtVerifier

    return JwtVerifier(
        settings.oidc_issuer, settings.oidc_audience,
        scopes_claim=settings.oidc_scopes_claim,
        namespaces_claim=settings.oidc_namespaces_claim,
        name_claim=settings.oidc_name_claim,
    )


def _include_routes(app: FastAPI) -> None:
    from headwater.server.routes import health

    app.include_router(health.router)

    from headwater.server.routes import (
        access,
        classification,
        classification_writes,
        datasets,
        deletes,
        drift,
        duplicates,
        events,
        graph_v2,
        impact,
        jobs,
        legacy_writes,
        lineage_read,
        namespace_check,
        namespaces,
        producers,
        quality,
        quarantine,
        readers,
        root_cause,
        run_writes,
        runs,
        search,
        tags,
    )

    app.include_router(namespace_check.router)
    app.include_router(namespaces.router)
    app.include_router(datasets.router)
    app.include_router(jobs.router)
    app.include_router(runs.router)
    app.include_router(lineage_read.router)
    app.include_router(graph_v2.router)
    app.include_router(impact.router)
    app.include_router(search.router)
    app.include_router(tags.router)
    app.include_router(events.router)
    app.include_router(legacy_writes.router)
    app.include_router(run_writes.router)
    app.include_router(deletes.router)
    app.include_router(quarantine.router)
    app.include_router(producers.router)
    app.include_router(drift.router)
    app.include_router(quality.router)
    app.include_router(readers.router)
    app.include_router(root_cause.router)
    app.include_router(duplicates.router)
    app.include_router(classification.router)
    app.include_router(classification_writes.router)
    app.include_router(access.router)
