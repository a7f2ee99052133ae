"""The Marquez-compatible ``/api/v1`` operations, each a function that builds a :class:`Call`.

Names follow what the operation answers (``datasets`` lists, ``dataset`` gets
one, ``put_dataset`` writes one); path parameters are percent-encoded whole,
so dataset names that are paths and namespaces that are URIs stay one segment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from headwater.client.call import Call, model, params, segment, time_param
from headwater.client.models import (
    Dataset,
    DatasetList,
    DatasetVersion,
    DatasetVersionList,
    EventList,
    LineageGraph,
    Namespace,
    NamespaceList,
    SearchResultList,
    Source,
    SourceList,
    Tag,
    TagList,
    UpstreamRunLineage,
)

__all__ = [
    "column_lineage",
    "dataset",
    "dataset_version",
    "dataset_versions",
    "datasets",
    "delete_dataset",
    "delete_namespace",
    "events",
    "lineage_graph",
    "namespace",
    "namespaces",
    "put_dataset",
    "put_namespace",
    "put_source",
    "put_tag",
    "run_lineage_upstream",
    "search",
    "source",
    "sources",
    "tag_dataset",
    "tag_field",
    "tags",
    "untag_dataset",
    "untag_field",
]

V1 = "/api/v1"
Time = datetime | str | None


def _dataset_path(namespace: str, name: str) -> str:
    return f"{V1}/namespaces/{segment(namespace)}/datasets/{segment(name)}"


# -- namespaces and sources ------------------------------------------------------------


def namespaces(*, limit: int = 100, offset: int = 0) -> Call[NamespaceList]:
    """A page of namespaces by name."""
    return Call("GET", f"{V1}/namespaces", model(NamespaceList), params(limit=limit, offset=offset))


def namespace(name: str) -> Call[Namespace]:
    """One namespace."""
    return Call("GET", f"{V1}/namespaces/{segment(name)}", model(Namespace))


def put_namespace(name: str, *, owner_name: str, description: str | None = None) -> Call[Namespace]:
    """Create or update a namespace."""
    body = params(ownerName=owner_name, description=description)
    return Call.json("PUT", f"{V1}/namespaces/{segment(name)}", model(Namespace), body)


def delete_namespace(name: str) -> Call[Namespace]:
    """Hide a namespace and soft-delete what it holds; answers it as it was."""
    return Call("DELETE", f"{V1}/namespaces/{segment(name)}", model(Namespace))


def sources(*, limit: int = 100, offset: int = 0) -> Call[SourceList]:
    """A page of sources."""
    return Call("GET", f"{V1}/sources", model(SourceList), params(limit=limit, offset=offset))


def source(name: str) -> Call[Source]:
    """One source."""
    return Call("GET", f"{V1}/sources/{segment(name)}", model(Source))


def put_source(
    name: str, *, type: str, connection_url: str, description: str | None = None
) -> Call[Source]:
    """Create or update a source."""
    body = params(type=type, connectionUrl=connection_url, description=description)
    return Call.json("PUT", f"{V1}/sources/{segment(name)}", model(Source), body)


# -- datasets --------------------------------------------------------------------------


def datasets(
    namespace: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[DatasetList]:
    """A page of the namespace's datasets by name."""
    return Call(
        "GET",
        f"{V1}/namespaces/{segment(namespace)}/datasets",
        model(DatasetList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def dataset(namespace: str, name: str) -> Call[Dataset]:
    """One dataset, with its current schema, tags, facets and column lineage."""
    return Call("GET", _dataset_path(namespace, name), model(Dataset))


def put_dataset(
    namespace: str,
    name: str,
    *,
    type: Literal["DB_TABLE", "STREAM"],
    physical_name: str,
    source_name: str,
    fields: Sequence[Mapping[str, Any]] = (),
    tags: Sequence[str] = (),
    description: str | None = None,
    run_id: str | None = None,
    schema_location: str | None = None,
) -> Call[Dataset]:
    """Create or update a dataset through Marquez's write API.

    ``fields`` are ``{"name", "type", "tags", "description"}`` objects.
    """
    body = params(
        type=type,
        physicalName=physical_name,
        sourceName=source_name,
        fields=[dict(f) for f in fields],
        tags=list(tags),
        description=description,
        runId=run_id,
        schemaLocation=schema_location,
    )
    return Call.json("PUT", _dataset_path(namespace, name), model(Dataset), body)


def delete_dataset(namespace: str, name: str) -> Call[Dataset]:
    """Soft-delete a dataset; answers it as it was."""
    return Call("DELETE", _dataset_path(namespace, name), model(Dataset))


def dataset_versions(
    namespace: str, name: str, *, limit: int = 100, offset: int = 0, cursor: str | None = None
) -> Call[DatasetVersionList]:
    """A page of the dataset's versions, newest first (one per producing run)."""
    return Call(
        "GET",
        _dataset_path(namespace, name) + "/versions",
        model(DatasetVersionList),
        params(limit=limit, offset=offset, cursor=cursor),
    )


def dataset_version(namespace: str, name: str, version: str) -> Call[DatasetVersion]:
    """One version of a dataset, with the run that produced it."""
    return Call(
        "GET",
        f"{_dataset_path(namespace, name)}/versions/{segment(version)}",
        model(DatasetVersion),
    )


def tag_dataset(namespace: str, name: str, tag: str) -> Call[Dataset]:
    """Tag a dataset."""
    return Call("POST", f"{_dataset_path(namespace, name)}/tags/{segment(tag)}", model(Dataset))


def untag_dataset(namespace: str, name: str, tag: str) -> Call[Dataset]:
    """Take a tag set through the API off a dataset."""
    return Call("DELETE", f"{_dataset_path(namespace, name)}/tags/{segment(tag)}", model(Dataset))


def tag_field(namespace: str, name: str, field: str, tag: str) -> Call[Dataset]:
    """Tag one column (field) of a dataset."""
    path = f"{_dataset_path(namespace, name)}/fields/{segment(field)}/tags/{segment(tag)}"
    return Call("POST", path, model(Dataset))


def untag_field(namespace: str, name: str, field: str, tag: str) -> Call[Dataset]:
    """Take a tag set through the API off a column."""
    path = f"{_dataset_path(namespace, name)}/fields/{segment(field)}/tags/{segment(tag)}"
    return Call("DELETE", path, model(Dataset))


# -- graph, search, tags, events -------------------------------------------------------


def lineage_graph(node_id: str, *, depth: int = 20) -> Call[LineageGraph]:
    """Marquez's lineage graph around ``node_id`` (undirected, Marquez's shape).

    :meth:`lineage` answers the directed question and is usually what you want.
    """
    return Call("GET", f"{V1}/lineage", model(LineageGraph), params(nodeId=node_id, depth=depth))


def column_lineage(
    node_id: str, *, depth: int = 20, with_downstream: bool = False
) -> Call[LineageGraph]:
    """Column lineage of a dataset or column, in Marquez's graph shape."""
    return Call(
        "GET",
        f"{V1}/column-lineage",
        model(LineageGraph),
        params(nodeId=node_id, depth=depth, withDownstream=with_downstream),
    )


def run_lineage_upstream(run_id: str, *, depth: int = 20) -> Call[UpstreamRunLineage]:
    """The runs that produced the dataset versions ``run_id`` read, and theirs, to ``depth``."""
    return Call(
        "GET",
        f"{V1}/runlineage/upstream",
        model(UpstreamRunLineage),
        params(runId=run_id, depth=depth),
    )


def search(
    text: str,
    *,
    filter: Literal["dataset", "job"] | None = None,
    sort: Literal["name", "updated_at"] = "name",
    limit: int = 10,
    cursor: str | None = None,
) -> Call[SearchResultList]:
    """Datasets and jobs whose names contain ``text``."""
    return Call(
        "GET",
        f"{V1}/search",
        model(SearchResultList),
        params(q=text, filter=filter, sort=sort, limit=limit, cursor=cursor),
    )


def tags(*, limit: int = 100, offset: int = 0) -> Call[TagList]:
    """A page of the tags defined through the API or by producers."""
    return Call("GET", f"{V1}/tags", model(TagList), params(limit=limit, offset=offset))


def put_tag(name: str, *, description: str | None = None) -> Call[Tag]:
    """Create a tag (or change its description)."""
    return Call.json(
        "PUT", f"{V1}/tags/{segment(name)}", model(Tag), params(description=description)
    )


def events(
    *,
    before: Time = None,
    after: Time = None,
    sort_direction: Literal["asc", "desc"] = "desc",
    limit: int = 100,
    offset: int = 0,
    cursor: str | None = None,
) -> Call[EventList]:
    """A page of the stored OpenLineage events, by event time."""
    return Call(
        "GET",
        f"{V1}/events/lineage",
        model(EventList),
        params(
            before=time_param(before),
            after=time_param(after),
            sortDirection=sort_direction,
            limit=limit,
            offset=offset,
            cursor=cursor,
        ),
    )
