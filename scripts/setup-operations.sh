#!/usr/bin/env bash
# What the operations tests check mcpbox's artifacts and signals with, into .tools/, never
# installed system-wide, pinned: a virtualenv with kubernetes-validate (the Kubernetes schemas,
# offline) and opentelemetry-proto (the official OTLP protobuf definitions, for the test's
# receiver); Debian 12's prometheus (promtool and the server); buildah and mmdebstrap (the
# container image, scripts/build-image.sh). Idempotent; prints `NAME=PATH` lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts"
venv="$root/.tools/operations-venv"
mkdir -p "$root/.tools"
exec 9>"$venv.lock"
flock 9
pins=(kubernetes-validate==1.37.0 opentelemetry-proto==1.45.2 protobuf==7.36.2)
if ! "$venv/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(any(m.version(p.split('==')[0]) != p.split('==')[1] for p in sys.argv[1:]))" "${pins[@]}" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" >&2
fi
exec 9>&-
echo "PYTHON=$venv/bin/python"
echo "PROMTOOL=$("$here/deb-into-tools.sh" prometheus prometheus 2.42.0 usr/bin/promtool)"
echo "PROMETHEUS=$root/.tools/prometheus/root/usr/bin/prometheus"
echo "BUILDAH=$("$here/deb-into-tools.sh" buildah buildah 1.28.2 usr/bin/buildah \
  golang-github-containers-common libgpgme11 libassuan0 libdevmapper1.02.1 mmdebstrap)"
echo "MMDEBSTRAP=$root/.tools/buildah/root/usr/bin/mmdebstrap"
