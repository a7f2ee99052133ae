"""Every server setting is a ``serve`` option, documented with its environment variable."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from headwater.cli import main
from headwater.config import Settings


def test_every_setting_has_a_documented_serve_option() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    for field in dataclasses.fields(Settings):
        option = "--" + field.name.replace("_", "-").replace("db-url", "db")
        assert option in help_text, option
        assert f"HEADWATER_{field.name.upper()}" in help_text, field.name


def test_sample_shares_the_server_options() -> None:
    result = CliRunner().invoke(main, ["sample", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for option in ("--db", "--data-dir", "--port", "--api-key", "--no-serve"):
        assert option in result.output


def test_a_bad_setting_is_a_clear_cli_error() -> None:
    result = CliRunner().invoke(main, ["serve", "--max-body-bytes", "0"], env={})
    assert result.exit_code == 1
    assert "max_body_bytes must be positive" in result.stderr
