"""Which configuration keys are secrets, and what is left of configs and traces."""

from __future__ import annotations

import pytest

from headwater.connect.redact import REDACTED, is_secret_key, redact_config, redact_text


@pytest.mark.parametrize(
    "key",
    [
        "database.password",
        "connection.password",
        "ssl.key.password",
        "ssl.keystore.password",
        "sasl.jaas.config",
        "aws.secret.access.key",
        "aws.access.key.id",
        "s3.sse.customer.key",
        "value.converter.basic.auth.user.info",
        "oauth.client.secret",
        "api.key",
        "apiKey",
        "gcp.credentials.json",
        "snowflake.private.key",
        "snowflake.private.key.passphrase",
        "consumer.override.sasl.jaas.config",
        "token",
        "db_password",
        "encryption.key",
    ],
)
def test_secret_keys(key: str):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "key.converter",
        "key.converter.schemas.enable",
        "value.converter",
        "key.ignore",
        "message.key.columns",
        "topics",
        "tasks.max",
        "ssl.keystore.location",
        "file",
        "connection.url",
        "database.user",
        "transforms.unwrap.type",
        "pk.mode",
    ],
)
def test_not_secret_keys(key: str):
    assert not is_secret_key(key)


def test_redact_config_keeps_references_and_cleans_urls_and_quotes():
    config = {
        "database.password": "pa55word",
        "connection.password": "${file:/secrets/db.properties:password}",
        "connection.url": "jdbc:postgresql://db/sales?user=u&password=inline&ssl=true",
        "other.url": "https://alice:topsecret@example.com/x",
        "file": "/tmp/pa55word/in.txt",
        "topics": "orders",
    }
    clean = redact_config(config)
    assert clean["database.password"] == REDACTED
    assert clean["connection.password"] == "${file:/secrets/db.properties:password}"
    assert clean["connection.url"] == (
        f"jdbc:postgresql://db/sales?user=u&password={REDACTED}&ssl=true"
    )
    assert clean["other.url"] == f"https://alice:{REDACTED}@example.com/x"
    assert clean["file"] == f"/tmp/{REDACTED}/in.txt"
    assert clean["topics"] == "orders"


def test_redact_text_removes_known_values_and_jaas_passwords():
    trace = (
        "org.apache.kafka.common.KafkaException: login failed for "
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="svc" password="hunter2hunter";\n\tat x.y(Z.java:1) with key s3kr3t'
    )
    clean = redact_text(trace, ["s3kr3t"])
    assert "hunter2hunter" not in clean and "s3kr3t" not in clean
    assert f'password="{REDACTED}"' in clean
