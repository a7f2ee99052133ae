"""A throwaway PostgreSQL cluster on a free loopback port, for tests and benchmarks.

Uses the server binaries from Debian's ``postgresql`` package (``.ci/run``
installs it). ``initdb`` refuses to run as root, so as root the cluster is
created and started as the ``postgres`` system user the package creates.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PgCluster", "find_pg_bin", "start_cluster"]


def find_pg_bin() -> Path | None:
    """The newest installed PostgreSQL ``bin`` directory, or None."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major, reverse=True)
    if candidates:
        return Path(candidates[0]).parent
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _major(path: str) -> int:
    try:
        return int(Path(path).parts[4])
    except (IndexError, ValueError):
        return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCluster:
    bin_dir: Path
    data_dir: Path
    port: int
    _as_user: list[str]

    @property
    def url(self) -> str:
        """SQLAlchemy URL of the ``postgres`` database (psycopg 3 driver)."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self, name: str) -> str:
        """Create a fresh database and return its SQLAlchemy URL."""
        self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                  "-d", "postgres", "-q", "-c", f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)

    def _run(self, tool: str, *args: str, check: bool = True) -> None:
        exe = self.bin_dir / tool
        if not exe.exists():
            exe = Path(shutil.which(tool) or tool)
        subprocess.run([*self._as_user, str(exe), *args], check=check,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def start_cluster(settings: Mapping[str, str] | None = None) -> PgCluster:
    """initdb + pg_ctl start on 127.0.0.1 and a free port; trust auth, no fsync.

    ``settings`` are further server settings (``{"wal_level": "logical"}``).
    """
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="headwater-pg-"))
    data = root / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
        os.chmod(root, 0o700)
    cluster = PgCluster(bin_dir, data, _free_port(), as_user)
    cluster._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                 "--no-sync")
    # No autovacuum: its ANALYZE of a freshly loaded table takes a transaction id,
    # which moves the snapshot watermark behind ETags (store/reads/watermark.py)
    # between two requests of a test that expects an unchanged answer's 304.
    opts = (f"-p {cluster.port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
            "-c autovacuum=off")
    opts += "".join(f" -c {key}={value}" for key, value in (settings or {}).items())
    cluster._run("pg_ctl", "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "start")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", cluster.port), timeout=1):
                return cluster
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"PostgreSQL did not start on port {cluster.port}")
