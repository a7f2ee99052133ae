"""The tests' schema registry: Apicurio Registry 2.4.2.Final, built from Maven Central.

Apicurio ships its server on Maven Central only as the application's classes
(``io.apicurio:apicurio-registry-app``), not as a runnable build, and 3.x does
not resolve there (docs/agent-configuration.md names the missing artifacts). So
a small Quarkus project depending on the 2.4.2.Final app is built with the
Quarkus Maven plugin of the version the app names (2.16.4.Final), once, into
``$XDG_CACHE_HOME/headwater/apicurio-registry-2.4.2`` (else ``~/.cache``); later
runs start the cached build. Two parts differ from Apicurio's own release,
because Maven Central does not serve them: the everit JSON Schema library is
left out, and the ``config-index`` extension is its 0.1.10.Final. Its storage is
in-memory H2; its Confluent-compatible API is ``<url>/apis/ccompat/v7``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from headwater.local_kafka.jvm import log_tail, start_and_wait, stop_jvm
from headwater.local_kafka.maven import LocalKafkaError, free_port, tail

__all__ = ["ApicurioRegistry", "build_registry", "running_registry"]

APICURIO_VERSION = "2.4.2.Final"
_QUARKUS_VERSION = "2.16.4.Final"

_POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>headwater.local</groupId>
  <artifactId>apicurio-registry</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement><dependencies>
    <dependency><groupId>io.quarkus</groupId><artifactId>quarkus-bom</artifactId>
      <version>{_QUARKUS_VERSION}</version><type>pom</type><scope>import</scope></dependency>
    <dependency><groupId>io.apicurio</groupId>
      <artifactId>apicurio-common-app-components-config-index</artifactId>
      <version>0.1.10.Final</version></dependency>
  </dependencies></dependencyManagement>
  <dependencies>
    <dependency><groupId>io.apicurio</groupId><artifactId>apicurio-registry-app</artifactId>
      <version>{APICURIO_VERSION}</version>
      <exclusions><exclusion><groupId>com.github.everit-org.json-schema</groupId>
        <artifactId>*</artifactId></exclusion></exclusions></dependency>
  </dependencies>
  <build><plugins>
    <plugin><groupId>io.quarkus</groupId><artifactId>quarkus-maven-plugin</artifactId>
      <version>{_QUARKUS_VERSION}</version>
      <executions><execution><goals><goal>build</goal></goals></execution></executions></plugin>
  </plugins></build>
</project>
"""

# Apicurio's jars carry no bean index, so Quarkus is told to index them.
_INDEXED = (
    "apicurio-common-app-components-auth apicurio-common-app-components-config "
    "apicurio-common-app-components-config-definitions apicurio-common-app-components-config-impl "
    "apicurio-common-app-components-config-index apicurio-common-app-components-content "
    "apicurio-common-app-components-core apicurio-common-app-components-logging "
    "apicurio-common-app-components-storage-spi apicurio-common-app-components-util "
    "apicurio-common-rest-client-common apicurio-common-rest-client-jdk "
    "apicurio-common-rest-client-vertx apicurio-data-models apicurio-registry-app "
    "apicurio-registry-common apicurio-registry-protobuf-schema-utilities "
    "apicurio-registry-schema-util-asyncapi apicurio-registry-schema-util-avro "
    "apicurio-registry-schema-util-common apicurio-registry-schema-util-graphql "
    "apicurio-registry-schema-util-json apicurio-registry-schema-util-kconnect "
    "apicurio-registry-schema-util-openapi apicurio-registry-schema-util-protobuf "
    "apicurio-registry-schema-util-provider apicurio-registry-schema-util-wsdl "
    "apicurio-registry-schema-util-xml apicurio-registry-schema-util-xsd apicurio-registry-ui "
    "apicurio-registry-utils-import-export apicurio-registry-utils-kafka "
    "apicurio-tenant-manager-client apicurio-tenant-manager-datamodel"
).split()


def _properties() -> str:
    lines = [
        f"quarkus.index-dependency.a{i}.group-id=io.apicurio\n"
        f"quarkus.index-dependency.a{i}.artifact-id={artifact}\n"
        for i, artifact in enumerate(_INDEXED)
    ]
    return "".join(lines) + "quarkus.package.type=fast-jar\n"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "headwater" / "apicurio-registry-2.4.2"


def build_registry() -> Path:
    """The runnable ``quarkus-run.jar``, built on first use and cached."""
    app = _cache_dir() / "quarkus-app"
    runner = app / "quarkus-run.jar"
    if runner.is_file():
        return runner
    _cache_dir().mkdir(parents=True, exist_ok=True)
    # Built aside and moved in whole, so a broken or concurrent build leaves no half app.
    build = Path(tempfile.mkdtemp(prefix="build-", dir=_cache_dir()))
    try:
        (build / "pom.xml").write_text(_POM)
        resources = build / "src" / "main" / "resources"
        resources.mkdir(parents=True)
        (resources / "application.properties").write_text(_properties())
        result = subprocess.run(
            ["mvn", "-q", "-B", "-DskipTests", "package"],
            cwd=build,
            capture_output=True,
            text=True,
        )
        built = build / "target" / "quarkus-app"
        if result.returncode != 0 or not (built / "quarkus-run.jar").is_file():
            raise LocalKafkaError(
                f"mvn could not build Apicurio Registry {APICURIO_VERSION}:\n"
                f"{tail(result.stdout + result.stderr)}"
            )
        try:
            os.replace(built, app)
        except OSError:
            if not runner.is_file():
                raise
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return runner


@dataclass
class ApicurioRegistry:
    """A running registry; ``ccompat_url`` is its Confluent-compatible API."""

    port: int
    root: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def ccompat_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/apis/ccompat/v7"

    @property
    def log_file(self) -> Path:
        return self.root / "registry.log"

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_file, lines, "(no registry log)")


def _probe(registry: ApicurioRegistry):  # type: ignore[no-untyped-def]
    def probe(_: str) -> str | None:
        try:
            response = httpx.get(f"{registry.ccompat_url}/subjects", timeout=2)
        except httpx.HTTPError as exc:
            return f"not answering ({exc})"
        return None if response.status_code == 200 else f"HTTP {response.status_code}"

    return probe


@contextmanager
def running_registry(timeout: float = 180.0) -> Iterator[ApicurioRegistry]:
    """Build (once) and start a registry on a free port; stop it on exit."""
    runner = build_registry()
    registry = ApicurioRegistry(free_port(), Path(tempfile.mkdtemp(prefix="apicurio-")))
    command = [
        "java",
        f"-Dquarkus.http.port={registry.port}",
        "-Dquarkus.http.host=127.0.0.1",
        "-jar",
        str(runner),
    ]
    try:
        start_and_wait(
            registry,
            "Apicurio Registry",
            registry.ccompat_url,
            command,
            _probe(registry),
            "not answering yet",
            timeout,
        )
        yield registry
    finally:
        stop_jvm(registry.process, registry.root, timeout=20)
