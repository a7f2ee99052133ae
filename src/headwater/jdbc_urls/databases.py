"""One rule per database: a JDBC URL (without ``jdbc:``) and its options -> its location.

:data:`PARSERS` maps subprotocols to their rule, in the order they are tried; the
forms each rule reads are listed in :mod:`headwater.jdbc_urls`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import parse_qsl

from headwater.jdbc_urls.location import JdbcLocation, Parser
from headwater.jdbc_urls.url_parts import (
    URL_SHAPE,
    current_schema,
    host_list,
    host_port,
    key_values,
    leading_parts,
    path_database,
    url_shaped,
)

__all__ = ["PARSERS"]


def _postgres(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    query = {k.lower(): v for k, v in parse_qsl(rest.split("?", 1)[1] if "?" in rest else "")}
    schema = current_schema({**props, **query})
    # jdbc:postgresql:db and jdbc:postgresql:/ mean localhost:5432.
    if "://" not in rest:
        database = rest.split(":", 1)[1].split("?", 1)[0].strip("/") if ":" in rest else ""
        return JdbcLocation(
            "postgres://localhost:5432", leading_parts(database, schema), 3, "postgres"
        )
    found = url_shaped(rest, "postgres", "5432", 3, "postgres")
    if found is None or not found.defaults:
        return found
    return replace(found, defaults=leading_parts(found.defaults[0], schema))


def _db2(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``db2://host:port/database[:currentSchema=S;k=v;]``."""
    found = url_shaped(rest, "db2", "50000", 3, None)
    match = URL_SHAPE.match(rest)
    if found is None or not found.defaults or match is None:
        return found
    _, _, path_params = match["path"].partition(":")
    schema = current_schema({**props, **key_values(path_params + match["params"], ";")})
    return replace(found, defaults=leading_parts(found.defaults[0], schema))


def _mysql_like(scheme: str) -> Parser:
    def parse(rest: str, props: dict[str, str]) -> JdbcLocation | None:
        match = URL_SHAPE.match(rest)
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
        joined = host_list(authority, "3306")
        if not joined:
            return None
        database = path_database(match["path"])
        return JdbcLocation(f"{scheme}://{joined}", leading_parts(database), 2, "mysql")

    return parse


def _sqlserver(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``sqlserver://host[\\instance][:port][;k=v...]``;
    jTDS ``jtds:sqlserver://host[:port][/db][;k=v]``."""
    if re.match(r"^(jtds:)?sqlserver://", rest, re.IGNORECASE) is None:
        return None  # jtds:sybase://
    body = re.sub(r"^(jtds:)?sqlserver://", "", rest, flags=re.IGNORECASE)
    address, _, params_text = body.partition(";")
    params = {**props, **key_values(params_text, ";")}
    address, _, path = address.partition("/")
    host, instance, port = None, None, None
    if address:
        if "\\" in address:
            address, _, instance_port = address.partition("\\")
            instance, _, port_part = instance_port.partition(":")
            host, _ = host_port(address)
            port = port_part or None
        else:
            host, port = host_port(address)
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
        return JdbcLocation(f"fabric-warehouse://{authority}", leading_parts(database), 3, "fabric")
    # A named instance listens on a port the SQL Browser hands out: no default port.
    authority = f"{host}:{port}" if port else (host if instance else f"{host}:1433")
    namespace = f"mssql://{authority}" + (f"/{instance}" if instance else "")
    return JdbcLocation(namespace, leading_parts(database), 3, "tsql")


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
        return JdbcLocation(f"oracle://{authority}", leading_parts(service), 3, "oracle")
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
    authority = host_list(address, "1521")
    if not authority:
        return None
    return JdbcLocation(f"oracle://{authority}", leading_parts(service), 3, "oracle")


def _teradata(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``teradata://host/DATABASE=db,DBS_PORT=1025,...``."""
    match = re.match(r"^teradata://(?P<host>[^/]+)/?(?P<params>.*)$", rest, re.IGNORECASE | re.S)
    if match is None:
        return None
    params = {**props, **key_values(match["params"], ",")}
    host, port = host_port(match["host"])
    port = port or params.get("dbs_port") or "1025"
    database = params.get("database")
    return JdbcLocation(f"teradata://{host}:{port}", leading_parts(database), 2, "teradata")


def _redshift(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``redshift[:iam]://endpoint:port/db``; ``redshift:iam://cluster:region/db``."""
    match = URL_SHAPE.match(rest)
    if match is None:
        return None
    host, port = host_port(match["authority"])
    database = path_database(match["path"])
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
    return JdbcLocation(namespace, leading_parts(database), 3, "redshift")


def _snowflake(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``snowflake://<account>.snowflakecomputing.com[:443]/?db=d&schema=s&warehouse=w``."""
    match = URL_SHAPE.match(rest)
    if match is None:
        return None
    host, _ = host_port(match["authority"])
    account = re.sub(r"(\.privatelink)?\.snowflakecomputing\.(com|cn)$", "", host)
    query = dict(parse_qsl(match["params"].lstrip("?"), keep_blank_values=False))
    params = {**props, **{k.lower(): v for k, v in query.items()}}
    database = params.get("db") or params.get("database")
    return JdbcLocation(
        f"snowflake://{account}", leading_parts(database, params.get("schema")), 3, "snowflake"
    )


def _trino(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``trino://host[:port][/catalog[/schema]][?k=v]``; without a port the driver
    uses 443 with SSL and 80 without."""
    match = URL_SHAPE.match(rest)
    if match is None:
        return None
    query = {k.lower(): v for k, v in parse_qsl(match["params"].lstrip("?"))}
    ssl = query.get("ssl", props.get("ssl", "")).lower() == "true"
    authority = host_list(match["authority"], "443" if ssl else "80")
    segments = [s for s in match["path"].split("/") if s]
    catalog = segments[0] if segments else props.get("catalog")
    schema = segments[1] if len(segments) > 1 else props.get("schema")
    return JdbcLocation(f"trino://{authority}", leading_parts(catalog, schema), 3, "trino")


def _hive(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``hive2://host:port/db;k=v?conf#vars``."""
    match = URL_SHAPE.match(rest)
    if match is None:
        return None
    authority = host_list(match["authority"], "10000")
    if not authority:
        return None
    return JdbcLocation(
        f"hive://{authority}", leading_parts(path_database(match["path"])), 2, "hive"
    )


def _athena(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``awsathena://AwsRegion=r;Catalog=c;Schema=s;...``
    (the v3 driver: ``athena://Region=r;...``)."""
    body = re.sub(r"^(aws)?athena://", "", rest, flags=re.IGNORECASE)
    params = {**props, **key_values(body, ";")}
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
    params = {**props, **key_values(rest.split(";", 1)[1] if ";" in rest else "", ";")}
    project = params.get("projectid")
    return JdbcLocation(
        "bigquery", leading_parts(project, params.get("defaultdataset")), 3, "bigquery"
    )


def _spanner(rest: str, props: dict[str, str]) -> JdbcLocation | None:
    """``cloudspanner:[//host:port]/projects/p/instances/i/databases/d[?k=v]``."""
    match = re.search(r"/projects/([^/?;]+)/instances/([^/?;]+)(?:/databases/([^/?;]+))?", rest)
    if match is None:
        return None
    project, instance, database = match.groups()
    return JdbcLocation(f"spanner://{project}:{instance}", leading_parts(database), 3, None)


def _with_default_port(scheme: str, port: str, levels: int, dialect: str | None) -> Parser:
    def parse(rest: str, props: dict[str, str]) -> JdbcLocation | None:
        # crate://, oceanbase:hamode://, clickhouse:http://, ch://: the subprotocol's variant goes.
        normalized = re.sub(r"^[\w+:]+://", f"{scheme}://", rest)
        return url_shaped(normalized, scheme, port, levels, dialect)

    return parse


PARSERS: tuple[tuple[frozenset[str], Parser], ...] = (
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
