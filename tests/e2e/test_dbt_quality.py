"""A real producer's quality facets: dbt-ol runs a dbt project with tests on PostgreSQL,
emitting to a live ``headwater serve``; the API and CLI show the assertions and their history.

dbt-ol (openlineage-dbt) reports each model's tests as one test run whose input
carries ``dataQualityAssertions``. The seed first holds a row without a customer,
so ``not_null`` on ``customer`` fails; the second build, after the row is fixed,
passes it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from headwater.cli import main
from tests.server.live import running_server
from tests.support.dbt_venv import dbt_bin

PROJECT = {
    "dbt_project.yml": "name: shop\nversion: '1.0'\nprofile: shop\nconfig-version: 2\n",
    "models/orders.sql": "select id, customer, amount from {{ ref('raw_orders') }}\n",
    "models/schema.yml": (
        "version: 2\nmodels:\n  - name: orders\n    columns:\n"
        "      - name: id\n        tests: [not_null, unique]\n"
        "      - name: customer\n        tests: [not_null]\n"
    ),
}


def _project(root: Path, pg_url: str, customer_of_3: str) -> None:
    url = make_url(pg_url)
    for path, text in PROJECT.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "seeds").mkdir(exist_ok=True)
    (root / "seeds/raw_orders.csv").write_text(
        f"id,customer,amount\n1,a,10\n2,b,20\n3,{customer_of_3},30\n"
    )
    (root / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev:\n      type: postgres\n"
        f"      host: {url.host}\n      port: {url.port}\n      user: {url.username}\n"
        f"      password: ''\n      dbname: {url.database}\n      schema: public\n"
        "      threads: 1\n"
    )


def _build(bin_dir: Path, root: Path, server: str) -> int:
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "OPENLINEAGE_URL": server,
        "OPENLINEAGE_NAMESPACE": "dbt",
        "DBT_PROFILES_DIR": str(root),
    }
    env.pop("OPENLINEAGE_CONFIG", None)
    result = subprocess.run(
        [str(bin_dir / "dbt-ol"), "build", "--project-dir", str(root)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Emitted" in result.stderr + result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result.returncode


@pytest.mark.postgres
def test_dbt_tests_as_quality_history(pg_url: str, tmp_path: Path) -> None:
    bin_dir = dbt_bin()
    store = f"sqlite:///{tmp_path / 'headwater.db'}"
    with running_server("--db", store) as server:
        _project(tmp_path, pg_url, customer_of_3="")
        assert _build(bin_dir, tmp_path, server) == 1  # the not_null test fails
        _project(tmp_path, pg_url, customer_of_3="c")
        assert _build(bin_dir, tmp_path, server) == 0
        url = make_url(pg_url)
        orders = f"dataset:postgres://{url.host}:{url.port}:{url.database}.public.orders"
        response = httpx.get(f"{server}/api/v2/datasets/{quote(orders, safe='')}/quality")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        history = {
            (s["assertion"], s["column"]): [p["success"] for p in s["points"]]
            for s in body["series"]
            if s["metric"] == "assertion"
        }
        assert history == {
            ("not_null", "customer"): [False, True],
            ("not_null", "id"): [True, True],
            ("unique", "id"): [True, True],
        }
        latest = body["latest"]
        assert latest["failedAssertions"] == 0
        assert {a["name"] for a in latest["assertions"]} == {
            "not_null_orders_customer",
            "not_null_orders_id",
            "unique_orders_id",
        }
        assert all(a["job"].endswith(".build.test") for a in latest["assertions"])
        failed = [o for o in body["observations"] if any(not a["success"] for a in o["assertions"])]
        assert [a["actual"] for a in failed[0]["assertions"] if not a["success"]] == ["1"]

        table = CliRunner().invoke(main, ["quality", orders, "--url", server])
        assert table.exit_code == 0, table.output
        assert "x." in table.output and "0 of 3 assertions failing" in table.output
        as_json = CliRunner().invoke(main, ["quality", orders, "--format", "json", "--url", server])
        assert json.loads(as_json.output)["latest"]["failedAssertions"] == 0
