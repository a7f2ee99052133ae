"""Everything of the agent that reaches into py4j's or PySpark's private internals.

The rest of the agent talks to the JVM through py4j's public surface only
(``gateway.jvm``, calls on ``JavaObject`` proxies, a Python listener declaring
``class Java: implements = [...]``) and to PySpark through its public API.
What needs more lives here, so that a py4j or PySpark release that moves an
internal breaks one known place. Each internal below was checked on PySpark
4.0.1 and 4.1.1 with py4j 0.10.9.9 (the Python package and the
``py4j-0.10.9.9.jar`` PySpark ships), each has a fallback, and none of them can
raise into the job.

py4j:

- ``JavaGateway._gateway_client`` and ``JavaObject._gateway_client`` — the
  client a gateway or a proxy talks through (:mod:`.connection`,
  :mod:`.chains`). Missing: no ``TCP_NODELAY`` (a large reply waits on a
  delayed ACK again) and no chains (getters are asked step by step).
- ``py4j.clientserver.JavaClient.get_thread_connection()`` and that
  connection's ``socket`` — the calling thread's own connection in pinned-thread
  mode, PySpark's default (:mod:`.connection`). Missing, or py4j's older
  shared-connection mode: no ``TCP_NODELAY``.
- ``py4j.protocol.GATEWAY_SERVER_OBJECT_ID`` with the ``JavaObject(target_id,
  gateway_client)`` constructor — a proxy of the JVM's ``GatewayServer``
  (:mod:`.connection`). Missing: no ``TCP_NODELAY``.
- Java ``py4j.GatewayServer.connections``, a private field read by reflection
  (``setAccessible``) — the JVM ends of the connections, of which the calling
  thread's gets ``setTcpNoDelay(true)`` (:mod:`.connection`). Missing or
  refused by the JVM: no ``TCP_NODELAY``.
- ``py4j.protocol.OUTPUT_CONVERTER[py4j.protocol.REFERENCE_TYPE]`` — the
  converter that makes a ``JavaObject`` of each object reference, wrapped once
  per process to note the proxies made inside a ``proxy_scope``
  (:mod:`.proxies`). Missing: proxies are freed by Python's cyclic collector,
  seconds later.
- ``JavaObject._methods`` — a proxy's method cache, whose ``JavaMember``
  entries point back at the proxy; cleared when nothing else holds the proxy
  (:mod:`.proxies`). Not a dict: the proxy is left to the cyclic collector.
- ``py4j.java_gateway.JVMView(gateway_client, jvm_name=DEFAULT_JVM_NAME,
  id=DEFAULT_JVM_ID)`` with those two ``py4j.protocol`` constants — the ``jvm``
  view of a proxy's own client, as ``JavaGateway.jvm`` is the gateway's
  (:mod:`.chains`). Missing: no chains.

PySpark (:mod:`.handles`):

- ``SparkSession._jsparkSession`` — the JVM session the listener registers on;
  its hash keeps ``headwater.agent.attach`` idempotent. Missing: the agent is
  disabled with a warning.
- ``SparkContext._gateway`` and ``pyspark.java_gateway.ensure_callback_server_started``
  (outside PySpark's API; it sets the gateway's ``_callback_server`` and
  ``_python_proxy_port``) — the callback server through which the JVM calls the
  Python listener. Missing: attach fails and lineage is off.
- ``SparkContext._jsc`` — the ``JavaSparkContext``, for Hadoop's configuration:
  the metastore URI that names catalog tables, a ``*Dataset`` save's output
  directory, the file system that qualifies a save's path. Missing: catalog
  tables are named by the warehouse directory; RDD saves are not reported.
- ``SparkContext._jvm`` — the JVM view an RDD save makes Hadoop's ``Path`` with.
  Missing: RDD saves are not reported.
- ``RDD._jrdd_deserializer``, ``RDD._jrdd``, ``PipelinedRDD._prev_jrdd`` and
  the serializers ``RDD._pickled()`` and ``saveAsPickleFile`` re-serialise to —
  the JavaRDD an RDD save runs over, which its job name is formed from.
  Missing: RDD saves are not reported; the save itself runs untouched.

The method handles :mod:`.chains` composes (``java.lang.invoke``) are public
JDK API; a chain lives here because it is built on its target's private client.
"""

from __future__ import annotations

__all__: list[str] = []
