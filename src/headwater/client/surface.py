"""The client's methods, listed once for :class:`Client` and :class:`AsyncClient`.

Each method is a descriptor around an operation's builder (a function in
:mod:`headwater.client.operations` that returns a :class:`Call`). Read from a
``Client`` it is a function that sends the call and returns the result; read
from an ``AsyncClient``, the same function returns an awaitable. ``iter_*``
methods do the same with the paging lists, yielding item after item across
pages (a generator, or an async generator).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, overload

from headwater.client.call import Call
from headwater.client.operations import analysis as v2_analysis
from headwater.client.operations import governance as v2_governance
from headwater.client.operations import headwater as v2
from headwater.client.operations import jobs as v1_jobs
from headwater.client.operations import marquez as v1

__all__ = ["AsyncOperations", "Operation", "Operations", "Page", "Pages", "SyncOperations"]

P = ParamSpec("P")
T = TypeVar("T")
I_co = TypeVar("I_co", covariant=True)


class Page(Protocol[I_co]):
    """A list answer: its items (and, for most, a ``totalCount``)."""

    @property
    def items(self) -> Sequence[I_co]: ...


class Operation(Generic[P, T]):
    """One operation as a method: sends what ``build`` describes."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> Operation[P, T]: ...
    @overload
    def __get__(self, obj: SyncOperations, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: AsyncOperations, owner: type) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build, send = self.build, obj.send

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return send(build(*args, **kwargs))

        return method


class Pages(Generic[P, I_co]):
    """A paging list as a method that yields every item, page after page."""

    def __init__(self, build: Callable[P, Call[Page[I_co]]]) -> None:
        self.build = build
        self.__doc__ = f"Every item of :meth:`{build.__name__}`, paging as it goes."

    @overload
    def __get__(self, obj: None, owner: type) -> Pages[P, I_co]: ...
    @overload
    def __get__(self, obj: SyncOperations, owner: type) -> Callable[P, Iterator[I_co]]: ...
    @overload
    def __get__(self, obj: AsyncOperations, owner: type) -> Callable[P, AsyncIterator[I_co]]: ...

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build, iterate = self.build, obj.iterate

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return iterate(build(*args, **kwargs))

        method.__doc__ = self.__doc__
        return method


class Operations:
    """Every operation of the API, as methods; see docs/python-api.md."""

    # -- lineage (v2: directed, as of a time) and impact
    lineage = Operation(v2.lineage)
    upstream = Operation(v2.upstream)
    downstream = Operation(v2.downstream)
    impact = Operation(v2.impact)
    impact_csv = Operation(v2.impact_csv)
    # -- Marquez's graphs
    lineage_graph = Operation(v1.lineage_graph)
    column_lineage = Operation(v1.column_lineage)
    run_lineage_upstream = Operation(v1.run_lineage_upstream)
    search = Operation(v1.search)
    iter_search = Pages(v1.search)
    # -- namespaces and sources
    namespaces = Operation(v1.namespaces)
    iter_namespaces = Pages(v1.namespaces)
    namespace = Operation(v1.namespace)
    put_namespace = Operation(v1.put_namespace)
    delete_namespace = Operation(v1.delete_namespace)
    sources = Operation(v1.sources)
    iter_sources = Pages(v1.sources)
    source = Operation(v1.source)
    put_source = Operation(v1.put_source)
    # -- datasets and their versions
    datasets = Operation(v1.datasets)
    iter_datasets = Pages(v1.datasets)
    dataset = Operation(v1.dataset)
    put_dataset = Operation(v1.put_dataset)
    delete_dataset = Operation(v1.delete_dataset)
    dataset_versions = Operation(v1.dataset_versions)
    iter_dataset_versions = Pages(v1.dataset_versions)
    dataset_version = Operation(v1.dataset_version)
    # -- jobs, their versions and runs
    jobs = Operation(v1_jobs.jobs)
    iter_jobs = Pages(v1_jobs.jobs)
    job = Operation(v1_jobs.job)
    put_job = Operation(v1_jobs.put_job)
    delete_job = Operation(v1_jobs.delete_job)
    job_versions = Operation(v1_jobs.job_versions)
    iter_job_versions = Pages(v1_jobs.job_versions)
    job_version = Operation(v1_jobs.job_version)
    job_runs = Operation(v1_jobs.job_runs)
    iter_job_runs = Pages(v1_jobs.job_runs)
    create_run = Operation(v1_jobs.create_run)
    run = Operation(v1_jobs.run)
    child_runs = Operation(v1_jobs.child_runs)
    iter_child_runs = Pages(v1_jobs.child_runs)
    run_facets = Operation(v1_jobs.run_facets)
    run_liveness = Operation(v1_jobs.run_liveness)
    start_run = Operation(v1_jobs.start_run)
    complete_run = Operation(v1_jobs.complete_run)
    fail_run = Operation(v1_jobs.fail_run)
    abort_run = Operation(v1_jobs.abort_run)
    # -- events
    ingest = Operation(v2.ingest)
    ingest_batch = Operation(v2.ingest_batch)
    events = Operation(v1.events)
    iter_events = Pages(v1.events)
    quarantine = Operation(v2.quarantine)
    iter_quarantine = Pages(v2.quarantine)
    # -- tags, classification, ownership
    tags = Operation(v1.tags)
    iter_tags = Pages(v1.tags)
    put_tag = Operation(v1.put_tag)
    tag_dataset = Operation(v1.tag_dataset)
    untag_dataset = Operation(v1.untag_dataset)
    tag_field = Operation(v1.tag_field)
    untag_field = Operation(v1.untag_field)
    tag_job = Operation(v1_jobs.tag_job)
    untag_job = Operation(v1_jobs.untag_job)
    classification = Operation(v2_governance.classification)
    dataset_badges = Operation(v2_governance.dataset_badges)
    compliance = Operation(v2_governance.compliance)
    compliance_csv = Operation(v2_governance.compliance_csv)
    tag_definitions = Operation(v2_governance.tag_definitions)
    put_tag_definition = Operation(v2_governance.put_tag_definition)
    delete_tag_definition = Operation(v2_governance.delete_tag_definition)
    blocks = Operation(v2_governance.blocks)
    add_block = Operation(v2_governance.add_block)
    remove_block = Operation(v2_governance.remove_block)
    owners = Operation(v2_governance.owners)
    add_owner = Operation(v2_governance.add_owner)
    remove_owner = Operation(v2_governance.remove_owner)
    # -- schema drift and data quality
    quality = Operation(v2.quality)
    readers = Operation(v2.readers)
    iter_readers = Pages(v2.readers)
    drift = Operation(v2.drift)
    iter_drift = Pages(v2.drift)
    root_cause = Operation(v2_analysis.root_cause)
    duplicates = Operation(v2_analysis.duplicates)
    drift_item = Operation(v2.drift_item)
    # -- access, audit, the server
    tokens = Operation(v2.tokens)
    create_token = Operation(v2.create_token)
    revoke_token = Operation(v2.revoke_token)
    audit = Operation(v2.audit)
    iter_audit = Pages(v2.audit)
    producers = Operation(v2.producers)
    namespace_check = Operation(v2.namespace_check)
    health = Operation(v2.health)
    metrics = Operation(v2.metrics)


class SyncOperations(Operations):
    """The operations of a client whose calls return their answers (:class:`Client`)."""


class AsyncOperations(Operations):
    """The operations of a client whose calls return awaitables (:class:`AsyncClient`)."""
