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

The rule of each database is in :mod:`headwater.jdbc_urls.databases`, the URL
pieces they share in :mod:`headwater.jdbc_urls.url_parts`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from headwater.jdbc_urls.databases import PARSERS
from headwater.jdbc_urls.location import JdbcLocation
from headwater.jdbc_urls.url_parts import url_shaped

__all__ = ["JdbcLocation", "jdbc_location"]


def jdbc_location(url: str, options: Mapping[str, str] | None = None) -> JdbcLocation:
    """The :class:`JdbcLocation` of a JDBC URL; ``options`` are the connection
    options given beside it (a SQL Server ``databaseName``, a Snowflake ``db``)."""
    props = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    rest = re.sub(r"^jdbc:", "", url.strip(), flags=re.IGNORECASE)
    subprotocol = rest.split(":", 1)[0].lower()
    for prefixes, parse in PARSERS:
        if subprotocol in prefixes:
            found = parse(rest, props)
            if found is not None:
                return found
    return _generic(rest, props)


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
    shaped = url_shaped(rest, subprotocol, None, 3, dialect)
    if shaped is not None:
        return shaped
    bare = re.split(r"[;?]", rest, maxsplit=1)[0]
    bare = re.sub(r"[^/:@]+(/[^/:@]*)?@", "", bare)  # user/password@ and user@
    return JdbcLocation(bare, (), 3, dialect)
