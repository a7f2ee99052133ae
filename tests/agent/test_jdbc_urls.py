"""JDBC URL forms -> dataset namespace and table names, as the OpenLineage naming
table lists them (no JVM)."""

from __future__ import annotations

import pytest

from headwater.jdbc_urls import JdbcLocation, jdbc_location

# (url, connection options, table as the SQL names it, namespace, name)
FORMS = [
    # PostgreSQL: postgres://host:port (5432), database.schema.table
    ("jdbc:postgresql://db.example.com:5433/sales", {}, "public.orders", "postgres://db.example.com:5433", "sales.public.orders"),
    ("jdbc:postgresql://DB.example.com/sales?ssl=true", {}, "orders", "postgres://db.example.com:5432", "sales.orders"),
    ("jdbc:postgresql:sales", {}, "s.t", "postgres://localhost:5432", "sales.s.t"),
    ("jdbc:postgresql://h1:5432,h2/sales", {}, "s.t", "postgres://h1:5432,h2:5432", "sales.s.t"),
    ("jdbc:postgresql://[::1]:5740/accounting", {}, "s.t", "postgres://[::1]:5740", "accounting.s.t"),
    # a currentSchema naming one schema is where unqualified tables are
    ("jdbc:postgresql://pg/sales?currentSchema=raw", {}, "orders", "postgres://pg:5432", "sales.raw.orders"),
    ("jdbc:postgresql://pg/sales", {"currentSchema": "raw"}, "orders", "postgres://pg:5432", "sales.raw.orders"),
    ("jdbc:postgresql://pg/sales?currentSchema=raw,public", {}, "orders", "postgres://pg:5432", "sales.orders"),
    # MySQL: mysql://host:port (3306), database.table; a qualified table names its database
    ("jdbc:mysql://mysql.example.com/shop", {}, "orders", "mysql://mysql.example.com:3306", "shop.orders"),
    ("jdbc:mysql://mysql.example.com:3307/shop", {}, "archive.orders", "mysql://mysql.example.com:3307", "archive.orders"),
    ("jdbc:mysql:loadbalance://h1,h2:3307/shop", {}, "orders", "mysql://h1:3306,h2:3307", "shop.orders"),
    ("jdbc:mysql://address=(host=h1)(port=3310)/shop", {}, "orders", "mysql://h1:3310", "shop.orders"),
    # MariaDB: not in the table; MySQL's rules under its own scheme
    ("jdbc:mariadb://maria:3306/shop", {}, "orders", "mariadb://maria:3306", "shop.orders"),
    # SQL Server: mssql://host:port (1433), database.schema.table
    ("jdbc:sqlserver://sql.example.com:1433;databaseName=sales", {}, "dbo.orders", "mssql://sql.example.com:1433", "sales.dbo.orders"),
    ("jdbc:sqlserver://sql.example.com;database=sales;encrypt=true", {}, "dbo.orders", "mssql://sql.example.com:1433", "sales.dbo.orders"),
    ("jdbc:sqlserver://sql.example.com", {"databaseName": "sales"}, "dbo.orders", "mssql://sql.example.com:1433", "sales.dbo.orders"),
    ("jdbc:sqlserver://;serverName=SQL1;portNumber=1500;databaseName=sales", {}, "dbo.t", "mssql://sql1:1500", "sales.dbo.t"),
    ("jdbc:sqlserver://sql1\\SQLEXPRESS;databaseName=sales", {}, "dbo.t", "mssql://sql1/SQLEXPRESS", "sales.dbo.t"),
    ("jdbc:jtds:sqlserver://sql1:1433/sales;instance=x", {}, "dbo.t", "mssql://sql1:1433/x", "sales.dbo.t"),
    # Azure Synapse: sqlserver://host:port, schema.table
    ("jdbc:sqlserver://ws.sql.azuresynapse.net:1433;database=pool", {}, "dbo.t", "sqlserver://ws.sql.azuresynapse.net:1433", "dbo.t"),
    # Microsoft Fabric warehouse: fabric-warehouse://endpoint, database.schema.table
    ("jdbc:sqlserver://abc.datawarehouse.fabric.microsoft.com;database=wh", {}, "dbo.t", "fabric-warehouse://abc.datawarehouse.fabric.microsoft.com", "wh.dbo.t"),
    # Oracle: oracle://host:port (1521), serviceName or sid .schema.table
    ("jdbc:oracle:thin:@ora.example.com:1521:ORCL", {}, "HR.EMP", "oracle://ora.example.com:1521", "ORCL.HR.EMP"),
    ("jdbc:oracle:thin:@//ora.example.com:1522/sales.example.com", {}, "HR.EMP", "oracle://ora.example.com:1522", "sales.example.com.HR.EMP"),
    ("jdbc:oracle:thin:@ora.example.com/SALES", {}, "HR.EMP", "oracle://ora.example.com:1521", "SALES.HR.EMP"),
    ("jdbc:oracle:thin:@tcps://ora.example.com:2484/SALES?wallet_location=/w", {}, "HR.EMP", "oracle://ora.example.com:2484", "SALES.HR.EMP"),
    ("jdbc:oracle:oci:@ora.example.com:1521/SALES", {}, "HR.EMP", "oracle://ora.example.com:1521", "SALES.HR.EMP"),
    (
        "jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS_LIST=(ADDRESS=(PROTOCOL=TCP)(HOST=o1)(PORT=1521))"
        "(ADDRESS=(PROTOCOL=TCP)(HOST=o2)(PORT=1522)))(CONNECT_DATA=(SERVICE_NAME=SALES)))",
        {},
        "HR.EMP",
        "oracle://o1:1521,o2:1522",
        "SALES.HR.EMP",
    ),
    # DB2: db2://host:port (50000), database.schema.table
    ("jdbc:db2://db2.example.com:50001/SAMPLE:currentSchema=APP;", {}, "T", "db2://db2.example.com:50001", "SAMPLE.APP.T"),
    ("jdbc:db2://db2.example.com:50001/SAMPLE:user=u;", {}, "APP.T", "db2://db2.example.com:50001", "SAMPLE.APP.T"),
    ("jdbc:db2://db2.example.com/SAMPLE", {}, "APP.T", "db2://db2.example.com:50000", "SAMPLE.APP.T"),
    # Teradata: teradata://host:port (1025), database.table
    ("jdbc:teradata://td.example.com/DATABASE=sales,DBS_PORT=1026,TMODE=ANSI", {}, "orders", "teradata://td.example.com:1026", "sales.orders"),
    ("jdbc:teradata://td.example.com/TMODE=TERA", {}, "sales.orders", "teradata://td.example.com:1025", "sales.orders"),
    # Redshift: redshift://{cluster}.{region}:port (5439), database.schema.table
    (
        "jdbc:redshift://examplecluster.abc123xyz789.us-west-2.redshift.amazonaws.com:5439/dev",
        {},
        "public.t",
        "redshift://examplecluster.us-west-2:5439",
        "dev.public.t",
    ),
    ("jdbc:redshift:iam://examplecluster:us-west-2/dev", {}, "public.t", "redshift://examplecluster.us-west-2:5439", "dev.public.t"),
    ("jdbc:redshift://wg.123456789012.eu-west-1.redshift-serverless.amazonaws.com/dev", {}, "public.t", "redshift://wg.eu-west-1:5439", "dev.public.t"),
    # Snowflake: snowflake://{account identifier}, database.schema.table
    ("jdbc:snowflake://MyOrg-MyAccount.snowflakecomputing.com/?db=SALES&schema=PUBLIC&warehouse=W", {}, "ORDERS", "snowflake://myorg-myaccount", "SALES.PUBLIC.ORDERS"),
    ("jdbc:snowflake://xy12345.us-east-2.aws.snowflakecomputing.com:443/?db=SALES", {}, "RAW.ORDERS", "snowflake://xy12345.us-east-2.aws", "SALES.RAW.ORDERS"),
    ("jdbc:snowflake://acct.privatelink.snowflakecomputing.com/", {"db": "SALES", "schema": "RAW"}, "ORDERS", "snowflake://acct", "SALES.RAW.ORDERS"),
    # Trino: trino://host:port, catalog.schema.table
    ("jdbc:trino://trino.example.com:8443/hive/web?SSL=true", {}, "clicks", "trino://trino.example.com:8443", "hive.web.clicks"),
    ("jdbc:trino://trino.example.com/hive?SSL=true", {}, "web.clicks", "trino://trino.example.com:443", "hive.web.clicks"),
    # Hive: hive://host:port (10000), database.table
    ("jdbc:hive2://hs2.example.com:10001/web;transportMode=http", {}, "clicks", "hive://hs2.example.com:10001", "web.clicks"),
    # Athena: awsathena://athena.{region}.amazonaws.com, catalog.database.table
    ("jdbc:awsathena://AwsRegion=us-east-1;S3OutputLocation=s3://b/p;Schema=web", {}, "clicks", "awsathena://athena.us-east-1.amazonaws.com", "AwsDataCatalog.web.clicks"),
    # BigQuery: bigquery, project.dataset.table
    (
        "jdbc:bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=proj;OAuthType=0;DefaultDataset=ds",
        {},
        "clicks",
        "bigquery",
        "proj.ds.clicks",
    ),
    # Spanner: spanner://{project}:{instance}, database.schema.table
    ("jdbc:cloudspanner:/projects/p1/instances/i1/databases/d1?lenient=true", {}, "t", "spanner://p1:i1", "d1.t"),
    # CrateDB and OceanBase
    ("jdbc:crate://crate.example.com:5432/", {}, "doc.t", "crate://crate.example.com:5432", "doc.t"),
    ("jdbc:oceanbase:hamode://ob.example.com/shop", {}, "orders", "oceanbase://ob.example.com:2881", "shop.orders"),
    # Not in the table: host-and-port URLs by their shape, others by the URL itself
    ("jdbc:derby://derby.example.com:1527/app;create=true", {}, "t", "derby://derby.example.com:1527", "app.t"),
    ("jdbc:h2:mem:testdb;DB_CLOSE_DELAY=-1", {}, "PUBLIC.T", "h2:mem:testdb", "PUBLIC.T"),
    ("jdbc:sqlite:/data/app.db", {}, "t", "sqlite:/data/app.db", "t"),
]


@pytest.mark.parametrize(("url", "options", "table", "namespace", "name"), FORMS, ids=[f[0][5:40] for f in FORMS])
def test_jdbc_url_forms(url: str, options: dict[str, str], table: str, namespace: str, name: str) -> None:
    location = jdbc_location(url, options)
    assert location.namespace == namespace
    assert location.table_name(table.split(".")) == name


@pytest.mark.parametrize(
    "url",
    [
        "jdbc:postgresql://db.example.com/sales?user=alice&password=SECRET",
        "jdbc:mysql://alice:SECRET@mysql.example.com:3306/shop",
        "jdbc:sqlserver://sql.example.com:1433;databaseName=sales;user=alice;password=SECRET",
        "jdbc:oracle:thin:alice/SECRET@ora.example.com:1521:ORCL",
        "jdbc:teradata://td.example.com/DATABASE=sales,USER=alice,PASSWORD=SECRET",
        "jdbc:snowflake://acct.snowflakecomputing.com/?db=SALES&user=alice&password=SECRET",
        "jdbc:trino://trino.example.com:8443/hive?password=SECRET",
        "jdbc:awsathena://AwsRegion=us-east-1;User=alice;Password=SECRET",
        "jdbc:h2:tcp://h2.example.com:9092/~/test;USER=alice;PASSWORD=SECRET",
        "jdbc:h2:mem:test;USER=alice;PASSWORD=SECRET",
        "jdbc:unknown:alice/SECRET@somewhere",
        "jdbc:other://alice:SECRET@host:1234/db?password=SECRET",
    ],
)
def test_credentials_never_reach_the_namespace(url: str) -> None:
    location = jdbc_location(url, {"user": "alice", "password": "SECRET"})
    assert "SECRET" not in location.namespace
    assert "alice" not in location.namespace
    assert all("SECRET" not in part for part in location.defaults)


def test_table_names_take_missing_levels_from_the_connection() -> None:
    location = JdbcLocation("snowflake://acct", ("DB", "SCHEMA"), 3)
    assert location.table_name(["T"]) == "DB.SCHEMA.T"
    assert location.table_name(["OTHER", "T"]) == "DB.OTHER.T"
    assert location.table_name(["DB2", "OTHER", "T"]) == "DB2.OTHER.T"
    assert JdbcLocation("mysql://h:3306", ("shop",), 2).table_name(["archive", "t"]) == "archive.t"
