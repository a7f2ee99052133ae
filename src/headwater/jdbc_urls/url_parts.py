"""Pieces of JDBC URLs the database rules share: hosts and ports, parameters, the database."""

from __future__ import annotations

import re
from collections.abc import Mapping

from headwater.jdbc_urls.location import JdbcLocation

__all__ = [
    "URL_SHAPE",
    "current_schema",
    "host_list",
    "host_port",
    "key_values",
    "leading_parts",
    "path_database",
    "url_shaped",
]

#: ``sub[:variant]://authority[/path][params]``.
URL_SHAPE = re.compile(
    r"^(?P<scheme>[\w+:.-]+?)://(?P<authority>[^/?;#]*)(?P<path>[^?;#]*)(?P<params>.*)$", re.S
)


def host_port(address: str) -> tuple[str, str | None]:
    """``host:port`` (``[v6]:port`` too) -> (lowercased host, port or None)."""
    address = address.strip()
    if "@" in address:  # user:password@host
        address = address.rsplit("@", 1)[1]
    if address.startswith("["):
        host, _, tail = address.partition("]")
        port = tail[1:] if tail.startswith(":") else None
        return f"{host}]".lower(), port or None
    host, _, port = address.partition(":")
    return host.lower(), port or None


def host_list(address_list: str, default_port: str | None) -> str:
    """Comma-separated hosts with their ports (the default where none is given)."""
    hosts = []
    for address in address_list.split(","):
        host, port = host_port(address)
        if not host:
            continue
        port = port or default_port
        hosts.append(f"{host}:{port}" if port else host)
    return ",".join(hosts)


def key_values(text: str, separators: str) -> dict[str, str]:
    """``k=v`` pairs split on any of ``separators``; keys lowercased."""
    found: dict[str, str] = {}
    for item in re.split(f"[{re.escape(separators)}]", text):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            found[key.strip().lower()] = value.strip()
    return found


def path_database(path: str) -> str | None:
    """The database of a URL path: the identifier that starts it (``/db2db:k=v;`` -> ``db2db``)."""
    found = re.match(r"[\w$.-]+", path.strip("/").split("/", 1)[0])
    return found.group(0) if found else None


def leading_parts(*parts: str | None) -> tuple[str, ...]:
    """Leading name parts, up to the first one that is unknown."""
    out: list[str] = []
    for part in parts:
        if not part:
            break
        out.append(part)
    return tuple(out)


def url_shaped(
    rest: str, scheme: str, default_port: str | None, levels: int, dialect: str | None
) -> JdbcLocation | None:
    """``sub[:variant]://hosts[/db][?params]`` with the database as the first path segment."""
    match = URL_SHAPE.match(rest)
    if match is None:
        return None
    authority = host_list(match["authority"], default_port)
    if not authority:
        return None
    database = path_database(match["path"])
    return JdbcLocation(f"{scheme}://{authority}", leading_parts(database), levels, dialect)


def current_schema(params: Mapping[str, str]) -> str | None:
    """A ``currentSchema`` that names one schema: where unqualified tables are."""
    schema = params.get("currentschema", "").strip()
    return schema if schema and "," not in schema else None
