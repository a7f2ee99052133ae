"""Where the store goes around SQLAlchemy to the database driver, and what that touches.

The write path runs a handful of statements per batch thousands of times a
second, and a lineage walk runs a few list statements per depth level; for
them SQLAlchemy's per-execution work (rendering expanding lists, caching by
statement, one bind processor call per value, row objects) cost more than the
database's own work (measured: ``docs/server.md``, ``docs/api.md``). Every
statement is still built with SQLAlchemy Core and compiled by SQLAlchemy;
only how it is executed differs. What this package relies on, beyond
SQLAlchemy's and the drivers' documented API, each checked on SQLAlchemy
2.1.9 (pinned), psycopg 3.3.9 and Python 3.11's sqlite3:

- :mod:`.bulk` and :mod:`.listselect` read ``SQLCompiler.positiontup`` (the
  order of a compiled statement's positional parameters) and
  ``SQLCompiler.params`` (its constant parameters);
- they rewrite the text SQLAlchemy renders for an expanding parameter before
  it knows the list, ``IN (__[POSTCOMPILE_<name>])``, into placeholders
  (SQLite) or ``= ANY(%(name)s)`` with an array (PostgreSQL);
- they write values as SQLAlchemy's types would store them (``DateTime`` as
  ``YYYY-MM-DD HH:MM:SS.ffffff`` text on SQLite, ``JSON`` as JSON text) and
  read them back the same way, so plain SQLAlchemy reads what they wrote;
- they run statements on the DBAPI cursor of ``Connection.connection`` inside
  SQLAlchemy's transaction, and wrap driver errors with
  ``DBAPIError.instance`` (an internal constructor) so callers see the
  exception SQLAlchemy would raise;
- :func:`.bulk.copy_rows` uses psycopg's ``Cursor.copy`` (PostgreSQL COPY);
- :func:`.begin.begin_sqlite` sends ``BEGIN``/``BEGIN IMMEDIATE`` on the
  driver connection from SQLAlchemy's ``begin`` event (the documented pysqlite
  recipe sends it through ``Connection.exec_driver_sql``).

Fallback: none at run time. A SQLAlchemy release that changes one of these
fails the constructors (a statement without the expected marker raises
``ValueError`` when it is first compiled, at start-up or in the first batch),
and ``tests/store/test_bulk.py`` and ``tests/store/test_listselect.py``
compare every kind of statement with SQLAlchemy's own execution on both
databases, so an upgrade that changes them fails the suite before it ships.
"""
