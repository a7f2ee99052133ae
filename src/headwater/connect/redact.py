"""Secrets out of connector configurations and task traces, before anything leaves.

A configuration value is replaced by :data:`REDACTED` when its key names a
secret: a dotted/underscored/dashed part reading ``password``, ``passwd``,
``pwd``, ``secret``, ``token``, ``credential(s)``, ``jaas`` (``sasl.jaas.config``),
``passphrase`` or ``keystore``/``truststore`` contents, a key whose last part is
``key`` (``ssl.key``, ``encryption.key``) and the pairs ``access.key``,
``secret.key``, ``private.key``, ``api.key`` (``aws.access.key.id`` too), and
``basic.auth.user.info`` / ``user.info`` (a schema registry's ``user:password``).
Keys that start with ``key.`` or ``value.`` describe a record's key or value
(``key.converter``), not a key to anything, and are kept unless another rule
matches. A value that is only a config-provider reference (``${file:/p:k}``,
``${env:VAR}``) is kept: it names where the secret is, not the secret.

Values under any key are also cleaned of credentials embedded in URLs
(``user:password@host``) and of ``password=...``-style parameters, as a JDBC
``connection.url`` may carry them.

A task's trace, every other configuration value and the dataset names are
cleaned of every secret value of the connector's configuration (exception
messages and paths may quote them), then of the same embedded credentials: a
dataset whose name quotes a secret is emitted under the redacted name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["REDACTED", "is_secret_key", "redact_config", "redact_text", "secret_values"]

#: What a secret is replaced by.
REDACTED = "[redacted]"

_SECRET_PARTS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "credential",
        "credentials",
        "jaas",
        "passphrase",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
    }
)
_SECRET_PAIRS = frozenset(
    {
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("api", "key"),
        ("user", "info"),
        ("client", "secret"),
    }
)
_REFERENCE = re.compile(r"^\$\{[^}]+\}$")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][\w+.-]*://)(?P<user>[^:/@\s]+):[^@/\s]+@")
_PARAM_SECRET = re.compile(
    r"(?i)(?P<key>\b(?:password|passwd|pwd|secret|token|apikey|api_key|access_key|secret_key)"
    r"\s*[=:]\s*)(?P<quote>[\"']?)[^\"'&;,\s)]+(?P=quote)"
)


def is_secret_key(key: str) -> bool:
    """Whether a configuration key names a secret (see the module docstring)."""
    parts = [p for p in re.split(r"[._\-]", key.lower()) if p]
    if not parts:
        return False
    if any(p in _SECRET_PARTS or p.endswith("password") for p in parts):
        return True
    if any(pair in _SECRET_PAIRS for pair in zip(parts, parts[1:], strict=False)):
        return True
    body = parts[1:] if parts[0] in ("key", "value") else parts
    return len(body) > 1 and body[-1] == "key"


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without ``secrets`` (longest first), URL credentials and ``password=`` values."""
    for secret in sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)
    return _PARAM_SECRET.sub(lambda m: f"{m['key']}{m['quote']}{REDACTED}{m['quote']}", text)


def secret_values(config: Mapping[str, str]) -> list[str]:
    """The values of ``config`` that :func:`redact_config` replaces."""
    return [
        str(v) for k, v in config.items() if is_secret_key(k) and v and not _REFERENCE.match(str(v))
    ]


def redact_config(config: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``config`` with every secret replaced by :data:`REDACTED`, also where
    another value quotes it."""
    secrets = secret_values(config)
    out: dict[str, str] = {}
    for key, value in config.items():
        text = "" if value is None else str(value)
        if is_secret_key(key) and text and not _REFERENCE.match(text):
            out[key] = REDACTED
        else:
            out[key] = redact_text(text, secrets)
    return out
