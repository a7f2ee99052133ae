#!/usr/bin/env bash
# Installs the headwater agent on one node of a Spark cluster and, with --conf-dir,
# writes the Spark configuration that attaches it to every PySpark driver.
# Run it on every node (an EMR bootstrap action, a Dataproc init action, a k8s
# image build step); it is idempotent: running it again replaces its own block
# in each file and nothing else.
#
#   bootstrap-agent.sh --url https://lineage.example.com [--namespace NAME]
#       [--api-key-file FILE] [--python PYTHON] [--package SPEC]
#       [--instrument-dir DIR] [--conf-dir DIR]
#
#   --url             where the agent posts events (spark.openlineage.transport.url)
#   --namespace       job namespace (spark.openlineage.namespace; default: the listener's)
#   --api-key-file    a file holding an ingest token (read here, never put on a command line)
#   --python          the Python the drivers run (default: python3); must be 3.11 or newer
#   --package         what pip installs (default: headwater[agent]: the agent without PySpark,
#                     which the cluster provides)
#   --instrument-dir  a fixed path linked to the agent's sitecustomize folder, so cluster
#                     definitions can name it before the node exists
#                     (default: /opt/headwater/instrument)
#   --conf-dir        a Spark configuration folder to write spark-defaults.conf and
#                     spark-env.sh into (default: none: on EMR the configuration
#                     classifications write them, see docs/deploy.md)
set -euo pipefail

url="" namespace="" api_key_file="" python="python3" package="headwater[agent]"
instrument_dir="/opt/headwater/instrument" conf_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --api-key-file) api_key_file="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --package) package="$2"; shift 2 ;;
    --instrument-dir) instrument_dir="$2"; shift 2 ;;
    --conf-dir) conf_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "bootstrap-agent.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "bootstrap-agent.sh: $python is older than 3.11; pass --python" >&2
  exit 1
fi

"$python" -m pip install --quiet --disable-pip-version-check "$package"
site="$("$python" -m headwater instrument --print-path)"
mkdir -p "$(dirname "$instrument_dir")"
ln -sfn "$site" "$instrument_dir"
echo "headwater agent installed for $python; sitecustomize folder linked at $instrument_dir"

[ -n "$conf_dir" ] || exit 0
mkdir -p "$conf_dir"
begin="# >>> headwater agent (bootstrap-agent.sh) >>>"
end="# <<< headwater agent <<<"

# Replaces this script's block in file $1 with stdin.
put_block() {
  local file="$1" tmp
  tmp="$(mktemp)"
  if [ -f "$file" ]; then
    awk -v b="$begin" -v e="$end" '$0==b{skip=1} !skip{print} $0==e{skip=0}' "$file" > "$tmp"
  fi
  { echo "$begin"; cat; echo "$end"; } >> "$tmp"
  cat "$tmp" > "$file"
  rm -f "$tmp"
}

{
  # Cluster mode: the driver runs in YARN's application master.
  echo "spark.yarn.appMasterEnv.HEADWATER_INSTRUMENT 1"
  echo "spark.yarn.appMasterEnv.PYTHONPATH $instrument_dir"
  if [ -n "$url" ]; then
    echo "spark.openlineage.transport.type http"
    echo "spark.openlineage.transport.url $url"
  fi
  if [ -n "$api_key_file" ]; then
    echo "spark.openlineage.transport.auth.type api_key"
    echo "spark.openlineage.transport.auth.apiKey $(tr -d '[:space:]' < "$api_key_file")"
  fi
  [ -z "$namespace" ] || echo "spark.openlineage.namespace $namespace"
} | put_block "$conf_dir/spark-defaults.conf"

# Client mode (spark-submit, pyspark, notebooks): spark-submit sources spark-env.sh.
put_block "$conf_dir/spark-env.sh" <<EOF
export HEADWATER_INSTRUMENT=1
export PYTHONPATH="$instrument_dir\${PYTHONPATH:+:\$PYTHONPATH}"
EOF
chmod 600 "$conf_dir/spark-defaults.conf"
echo "Spark configuration written to $conf_dir (spark-defaults.conf, spark-env.sh)"
