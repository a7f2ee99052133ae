"""JDBC URLs -> dataset namespaces and table names, by the OpenLineage naming table.

Shared by every producer that names database tables (the agent's JDBC reads
and writes, the Kafka Connect watcher's JDBC connectors), so each names a
table alike.

:func:`jdbc_location` reads a JDBC URL (and the connection options given
beside it) and returns a :class:`JdbcLocation`: the dataset namespace of the
database service and the leading name parts the connection supplies (its
database, a default schema). :meth:`JdbcLocation.table_name` then names a
table as the SQL names it. The forms, as the naming table lists them:

==========================  ====================================  =============================
JDBC URL                    namespace                             name
==========================  ====================================  =============================
``postgresql://h:p/db``     ``postgres://h:p`` (5432)             ``db.schema.table``
``mysql://h:p/db``          ``mysql://h:p`` (3306)                ``db.table``
``mariadb://h:p/db``        ``mariadb://h:p`` (3306)              ``db.table``
``sqlserver://h:p;databaseName=db``  ``mssql://h:p`` (1433)       ``db.schema.table``
``oracle:thin:@h:p:sid``, ``@//h:p/service``, TNS descriptors
                            ``oracle://h:p`` (1521)               ``service.schema.table``
``db2://h:p/db``            ``db2://h:p`` (50000)                 ``db.schema.table``
``teradata://h/DATABASE=d`` ``teradata://h:p`` (1025)             ``db.table``
``redshift://c.id.region.redshift.amazonaws.com:p/db``
                            ``redshift://c.region:p`` (5439)      ``db.schema.table``
``snowflake://acct.snowflakecomputing.com/?db=d&schema=s``
                            ``snowflake://acct``                  ``db.schema.table``
``trino://h:p/catalog/schema``  ``trino://h:p``                   ``catalog.schema.table``
``hive2://h:p/db``          ``hive://h:p`` (10000)                ``db.table``
``awsathena://AwsRegion=r;...``  ``awsathena://athena.r.amazonaws.com``  ``catalog.db.table``
``bigquery://...;ProjectId=p``   ``bigquery``                     ``project.dataset.table``
``cloudspanner:/projects/p/instances/i/databases/d``  ``spanner://p:i``  ``db.schema.table``
``crate://h:p/``, ``oceanbase://h:p/db``, ``clickhouse://h:p/db``  likewise
==========================  ====================================  =============================

Azure Synapse (``*.sql.azuresynapse.net``) is ``sqlserver://h:p`` with
``schema.table`` names, and a Microsoft Fabric warehouse
(``*.datawarehouse.fabric.microsoft.com``) ``fabric-warehouse://endpoint``,
both as the table lists them. A URL no rule knows is named
``scheme://host:port`` + ``db.table`` when it has that shape, else by the URL
itself with its parameters left out.

A table keeps the qualification the SQL gives it: an unqualified PostgreSQL
table ``t`` read from database ``db`` is ``db.t``, not ``db.public.t`` — which
schema a bare name resolves to depends on the session's ``search_path``, which
the agent cannot see; the OpenLineage Spark and Flink integrations name such
tables the same way, so their events and headwater's meet on the same dataset.
Where the connection names the one schema bare names resolve to (PostgreSQL's
and DB2's ``currentSchema``, Snowflake's ``schema``, a Trino URL's), that
schema fills the level.

Credentials never reach a namespace: user information, ``user=`` and
``password=`` parameters and whole query strings are left out; the namespace
is built from the host and port alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl

__all__ = ["JdbcLocation", "jdbc_location"]


@dataclass(frozen=True)
class JdbcLocation:
    """Where a JDBC connection points: a namespace, and how it names tables."""

    #: The dataset namespace (``postgres://host:5432``).
    namespace: str
    #: Leading name parts the connection supplies (``("db",)``, ``("catalog", "schema")``).
    defaults: tuple[str, ...] = ()
    #: How many parts a fully qualified table name has in this system.
    levels: int = 3
    #: The sqlglot dialect of its SQL, when sqlglot has one.
    dialect: str | None = None

    def table_name(self, parts: Sequence[str]) -> str:
        """The dataset name of a table the SQL names with ``parts`` (``("schema", "t")``).

        Levels the SQL leaves out are taken from the connection, from the left:
        ``("t",)`` on a connection to database ``db`` is ``db.t``.
        """
        missing = max(self.levels - len(parts), 0)
        return ".".join([*self.defaults[:missing], *parts])


def jdbc_location(url: str, options: Mapping[str, str] | None = None) -> JdbcLocation:
    """The :class:`JdbcLocation` of a JDBC URL; ``options`` are the connection
    options given beside it (a SQL Server ``databaseName``, a Snowflake ``db``)."""
    props = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    rest = re.sub(r"^jdbc:", "", url.strip(), flags=re.IGNORECASE)
    subprotocol = rest.split(":", 1)[0].lower()
    for prefixes, parse in _PARSERS:
        if subprotocol in prefixes:
            found = parse(rest, props)
            if found is not None:
                return found
    return _generic(rest, props)


#: A URL without ``jdbc:`` and its lowercased options -> its location, or None.
Parser = Callable[[str, dict[str, str]], JdbcLocation | None]

# -- pieces of URLs -------------------------------------------------------------------

_AUTHORITY = re.compile(
    r"^(?P<scheme>[\w+:.-]+?)://(?P<authority>[^/?;#]*)(?P<path>[^?;#]*)(?P<params>.*)$", re.S
)


def _host_port(address: str) -> tuple[str, str | None]:
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


def _authority(address_list: str, default_port: str | None) -> str:
    """Comma-separated hosts with their ports (the default where none is given)."""
    hosts = []
    for address in address_list.split(","):
        host, port = _host_port(address)
        if not host:
            continue
        port = port or default_port
        hosts.append(f"{host}:{port}" if port else host)
    return ",".join(hosts)


def _params(text: str, separators: str) -> dict[str, str]:
    """``k=v`` pairs split on any of ``separators``; keys lowercased."""
    found: dict[str, str] = {}
    for item in re.split(f"[{re.escape(separators)}]", text):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            found[key.strip().lower()] = value.strip()
    return found


def _first_segment(path: str) -> str | None:
    """The database of a URL path: the identifier that starts it (``/db2db:k=v;`` -> ``db2db``)."""
    found = re.match(r"[\w$.-]+", path.strip("/").split("/", 1)[0])
    return found.group(0) if found else None


def _defaults(*parts: str | None) -> tuple[str, ...]:
    """Leading name parts, up to the first one that is unknown."""
    out: list[str] = []
    for part in parts:
        if not part:
            break
        out.append(part)
    return tuple(out)


def _url_shaped(
    rest: str, scheme: str, default_port: str | None, levels: int, dialect: str | None
) -> JdbcLocation | None:
    """``sub[:variant]://hosts[/db][?params]`` with the database as the first path segment."""
    match = _AUTHORITY.match(rest)
    if match is None:
        return None
    authority = _authority(match["authority"], default_port)
    if not authority:
        return None
    database = _first_segment(match["path"])
    return JdbcLocation(f"{scheme}://{authority}", _defaults(database), levels, dialect)


# -- one parser per database ----------------------------------------------------------


def _current_schema(params: Mapping[str, str]) -> str | None:
    """A ``currentSchema`` that names one schema: where unqualified tables are."""
    schema = params.get("currentschema", "").strip()
    return schema if schema and "," not in schema else None


def _postgres(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    query = {k.lower(): v for k, v in parse_qsl(rest.split("?", 1)[1] if "?" in rest else "")}
    schema = _current_schema({**props, **query})
    # jdbc:postgresql:db and jdbc:postgresql:/ mean localhost:5432.
    if "://" not in rest:
        database = rest.split(":", 1)[1].split("?", 1)[0].strip("/") if ":" in rest else ""
        return JdbcLocation("postgres://localhost:5432", _defaults(database, schema), 3, "postgres")
    found = _url_shaped(rest, "postgres", "5432", 3, "postgres")
    if found is None or not found.defaults:
        return found
    return replace(found, defaults=_defaults(found.defaults[0], schema))


def _db2(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``db2://host:port/database[:currentSchema=S;k=v;]``."""
    found = _url_shaped(rest, "db2", "50000", 3, None)
    match = _AUTHORITY.match(rest)
    if found is None or not found.defaults or match is None:
        return found
    _, _, path_params = match["path"].partition(":")
    schema = _current_schema({**props, **_params(path_params + match["params"], ";")})
    return replace(found, defaults=_defaults(found.defaults[0], schema))


def _mysql_like(scheme: str) -> Parser:
    def parse(rest: str, props: dict[str, str]) -> JdbcLocation | None:
        match = _AUTHORITY.match(rest)
        if match is None:
            return None
        authority = match["authority"]
        if "(" in authority or ("[" in authority and "=" in authority):
            # address=(host=h)(port=p) and [(host=h,port=p),...] forms
            hosts = re.findall(r"host=([^,)\s]+)", authority, re.IGNORECASE)
            ports = re.findall(r"port=(\d+)", authority, re.IGNORECASE)
            authority = ",".join(
                f"{h}:{ports[i]}" if i < len(ports) else h for i, h in enumerate(hosts)
            )
        joined = _authority(authority, "3306")
        if not joined:
            return None
        database = _first_segment(match["path"])
        return JdbcLocation(f"{scheme}://{joined}", _defaults(database), 2, "mysql")

    return parse


def _sqlserver(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``sqlserver://host[\\instance][:port][;k=v...]``;
    jTDS ``jtds:sqlserver://host[:port][/db][;k=v]``."""
    if re.match(r"^(jtds:)?sqlserver://", rest, re.IGNORECASE) is None:
        return None  # jtds:sybase://
    body = re.sub(r"^(jtds:)?sqlserver://", "", rest, flags=re.IGNORECASE)
    address, _, params_text = body.partition(";")
    params = {**props, **_params(params_text, ";")}
    address, _, path = address.partition("/")
    host, instance, port = None, None, None
    if address:
        if "\\" in address:
            address, _, instance_port = address.partition("\\")
            instance, _, port_part = instance_port.partition(":")
            host, _ = _host_port(address)
            port = port_part or None
        else:
            host, port = _host_port(address)
    host = host or (params.get("servername") or "").lower() or None
    if host is None:
        return None
    if "\\" in host:  # serverName=host\instance
        host, _, instance = host.partition("\\")
    port = port or params.get("portnumber") or params.get("port")
    instance = instance or params.get("instancename") or params.get("instance")
    database = path.strip("/") or params.get("databasename") or params.get("database")
    if host.endswith(".sql.azuresynapse.net"):
        return JdbcLocation(f"sqlserver://{host}:{port or '1433'}", (), 2, "tsql")
    if host.endswith(".datawarehouse.fabric.microsoft.com"):
        authority = f"{host}:{port}" if port else host
        return JdbcLocation(f"fabric-warehouse://{authority}", _defaults(database), 3, "fabric")
    # A named instance listens on a port the SQL Browser hands out: no default port.
    authority = f"{host}:{port}" if port else (host if instance else f"{host}:1433")
    namespace = f"mssql://{authority}" + (f"/{instance}" if instance else "")
    return JdbcLocation(namespace, _defaults(database), 3, "tsql")


_TNS_VALUE = r"\(\s*{key}\s*=\s*([^)\s]+)\s*\)"


def _oracle(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``oracle:thin:[user/password]@`` + ``host:port:sid``, ``//host:port/service``,
    ``tcps://host:port/service`` or a TNS ``(DESCRIPTION=...)`` descriptor."""
    if "@" not in rest:
        return None
    target = rest.split("@", 1)[1].strip()
    if target.startswith("("):
        hosts = re.findall(_TNS_VALUE.format(key="HOST"), target, re.IGNORECASE)
        ports = re.findall(_TNS_VALUE.format(key="PORT"), target, re.IGNORECASE)
        if not hosts:
            return None
        authority = ",".join(
            f"{h.lower()}:{ports[i] if i < len(ports) else '1521'}" for i, h in enumerate(hosts)
        )
        service = None
        for key in ("SERVICE_NAME", "SID", "INSTANCE_NAME"):
            found = re.search(_TNS_VALUE.format(key=key), target, re.IGNORECASE)
            if found:
                service = found.group(1)
                break
        return JdbcLocation(f"oracle://{authority}", _defaults(service), 3, "oracle")
    target = re.sub(r"^(//|\w+://)", "", target.split("?", 1)[0])
    address, slash, service = target.partition("/")
    if not slash:
        # host:port:sid (the old SID form)
        pieces = address.rsplit(":", 2) if not address.startswith("[") else [address]
        if len(pieces) == 3 and pieces[1].isdigit():
            address, service = f"{pieces[0]}:{pieces[1]}", pieces[2]
        else:
            service = ""
    service = service.split(":", 1)[0]  # host:port/service:dedicated
    authority = _authority(address, "1521")
    if not authority:
        return None
    return JdbcLocation(f"oracle://{authority}", _defaults(service), 3, "oracle")


def _teradata(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``teradata://host/DATABASE=db,DBS_PORT=1025,...``."""
    match = re.match(r"^teradata://(?P<host>[^/]+)/?(?P<params>.*)$", rest, re.IGNORECASE | re.S)
    if match is None:
        return None
    params = {**props, **_params(match["params"], ",")}
    host, port = _host_port(match["host"])
    port = port or params.get("dbs_port") or "1025"
    database = params.get("database")
    return JdbcLocation(f"teradata://{host}:{port}", _defaults(database), 2, "teradata")


def _redshift(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``redshift[:iam]://endpoint:port/db``; ``redshift:iam://cluster:region/db``."""
    match = _AUTHORITY.match(rest)
    if match is None:
        return None
    host, port = _host_port(match["authority"])
    database = _first_segment(match["path"])
    if port and not port.isdigit():  # cluster-id:region
        cluster = f"{host}.{port}"
        port = None
    else:
        labels = host.split(".")
        # cluster.unique-id.region.redshift.amazonaws.com, and
        # workgroup.account.region.redshift-serverless.amazonaws.com
        if len(labels) >= 5 and labels[3] in ("redshift", "redshift-serverless"):
            cluster = f"{labels[0]}.{labels[2]}"
        else:
            cluster = host
    namespace = f"redshift://{cluster}:{port or '5439'}"
    return JdbcLocation(namespace, _defaults(database), 3, "redshift")


def _snowflake(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``snowflake://<account>.snowflakecomputing.com[:443]/?db=d&schema=s&warehouse=w``."""
    match = _AUTHORITY.match(rest)
    if match is None:
        return None
    host, _ = _host_port(match["authority"])
    account = re.sub(r"(\.privatelink)?\.snowflakecomputing\.(com|cn)$", "", host)
    query = dict(parse_qsl(match["params"].lstrip("?"), keep_blank_values=False))
    params = {**props, **{k.lower(): v for k, v in query.items()}}
    database = params.get("db") or params.get("database")
    return JdbcLocation(
        f"snowflake://{account}", _defaults(database, params.get("schema")), 3, "snowflake"
    )


def _trino(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``trino://host[:port][/catalog[/schema]][?k=v]``; without a port the driver
    uses 443 with SSL and 80 without."""
    match = _AUTHORITY.match(rest)
    if match is None:
        return None
    query = {k.lower(): v for k, v in parse_qsl(match["params"].lstrip("?"))}
    ssl = query.get("ssl", props.get("ssl", "")).lower() == "true"
    authority = _authority(match["authority"], "443" if ssl else "80")
    segments = [s for s in match["path"].split("/") if s]
    catalog = segments[0] if segments else props.get("catalog")
    schema = segments[1] if len(segments) > 1 else props.get("schema")
    return JdbcLocation(f"trino://{authority}", _defaults(catalog, schema), 3, "trino")


def _hive(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``hive2://host:port/db;k=v?conf#vars``."""
    match = _AUTHORITY.match(rest)
    if match is None:
        return None
    authority = _authority(match["authority"], "10000")
    if not authority:
        return None
    return JdbcLocation(f"hive://{authority}", _defaults(_first_segment(match["path"])), 2, "hive")


def _athena(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``awsathena://AwsRegion=r;Catalog=c;Schema=s;...``
    (the v3 driver: ``athena://Region=r;...``)."""
    body = re.sub(r"^(aws)?athena://", "", rest, flags=re.IGNORECASE)
    params = {**props, **_params(body, ";")}
    region = params.get("awsregion") or params.get("region")
    if not region:
        return None
    catalog = params.get("catalog") or "AwsDataCatalog"
    schema = params.get("schema") or params.get("database") or "default"
    return JdbcLocation(
        f"awsathena://athena.{region.lower()}.amazonaws.com", (catalog, schema), 3, "athena"
    )


def _bigquery(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p;DefaultDataset=d``."""
    params = {**props, **_params(rest.split(";", 1)[1] if ";" in rest else "", ";")}
    project = params.get("projectid")
    return JdbcLocation("bigquery", _defaults(project, params.get("defaultdataset")), 3, "bigquery")


def _spanner(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``cloudspanner:[//host:port]/projects/p/instances/i/databases/d[?k=v]``."""
    match = re.search(r"/projects/([^/?;]+)/instances/([^/?;]+)(?:/databases/([^/?;]+))?", rest)
    if match is None:
        return None
    project, instance, database = match.groups()
    return JdbcLocation(f"spanner://{project}:{instance}", _defaults(database), 3, None)


def _with_default_port(scheme: str, port: str, levels: int, dialect: str | None) -> Parser:
    def parse(rest: str, props: dict[str, str]) -> JdbcLocation | None:
        # crate://, oceanbase:hamode://, clickhouse:http://, ch://: the subprotocol's variant goes.
        normalized = re.sub(r"^[\w+:]+://", f"{scheme}://", rest)
        return _url_shaped(normalized, scheme, port, levels, dialect)

    return parse


_PARSERS: tuple[tuple[frozenset[str], Parser], ...] = (
    (frozenset({"postgresql", "postgres", "pgsql"}), _postgres),
    (frozenset({"mysql", "mysql+srv", "mysqlx"}), _mysql_like("mysql")),
    (frozenset({"mariadb"}), _mysql_like("mariadb")),
    (frozenset({"sqlserver", "jtds"}), _sqlserver),
    (frozenset({"oracle"}), _oracle),
    (frozenset({"db2"}), _db2),
    (frozenset({"teradata"}), _teradata),
    (frozenset({"redshift"}), _redshift),
    (frozenset({"snowflake"}), _snowflake),
    (frozenset({"trino"}), _trino),
    (frozenset({"hive2", "hive"}), _hive),
    (frozenset({"awsathena", "athena"}), _athena),
    (frozenset({"bigquery"}), _bigquery),
    (frozenset({"cloudspanner"}), _spanner),
    (frozenset({"crate"}), _with_default_port("crate", "5432", 3, "postgres")),
    (frozenset({"oceanbase"}), _with_default_port("oceanbase", "2881", 2, "mysql")),
    (frozenset({"clickhouse", "ch"}), _with_default_port("clickhouse", "8123", 2, "clickhouse")),
)

#: Dialects of the generic rule's schemes that sqlglot knows.
_GENERIC_DIALECTS = {
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "presto": "presto",
    "databricks": "databricks",
}


def _generic(rest: str, props: dict[str, str]) -> JdbcLocation:
    """``scheme://host:port/db`` when the URL has that shape; else the URL itself,
    without credentials or parameters (``h2:mem:test``, ``sqlite:/data/app.db``)."""
    subprotocol = rest.split(":", 1)[0].lower()
    dialect = _GENERIC_DIALECTS.get(subprotocol)
    shaped = _url_shaped(rest, subprotocol, None, 3, dialect)
    if shaped is not None:
        return shaped
    bare = re.split(r"[;?]", rest, maxsplit=1)[0]
    bare = re.sub(r"[^/:@]+(/[^/:@]*)?@", "", bare)  # user/password@ and user@
    return JdbcLocation(bare, (), 3, dialect)
