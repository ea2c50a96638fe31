#!/usr/bin/env bash
# Builds mcpbox's container image without a Docker engine (docs/deploy.md): a root filesystem of
# Debian 12's libc and libgcc only (mmdebstrap, `extract`: no shell, no package manager), the
# mcpbox binary, a non-root user (65532), writable paths left to volumes; assembled and
# committed by buildah (`--isolation chroot`, vfs storage in a directory of its own).
#
#   scripts/build-image.sh [OUT]   OUT: an OCI archive [default: target/mcpbox-image.tar]
#
# MCPBOX=path picks the binary [default: a release build, made here]; a fail-point build (the
# test suite's) is refused. Prints OUT and the image's size. Needs root (buildah's chroot
# isolation), as CI and the tests have.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/mcpbox-image.tar}
# Never an image of a fail-point build (scripts/no-failpoints.sh), but in the test suite's own
# image test (MCPBOX_TEST_FAILPOINTS=1, which that binary needs to run at all).
product_check() {
  [ "${MCPBOX_TEST_FAILPOINTS:-}" = 1 ] || "$root/scripts/no-failpoints.sh" "$1"
}
if [ -n "${MCPBOX:-}" ]; then
  product_check "$MCPBOX"
fi
eval "$("$root/scripts/setup-operations.sh" | grep -E '^(BUILDAH|MMDEBSTRAP)=')"
tools=$(dirname "$(dirname "$(dirname "$BUILDAH")")")
export LD_LIBRARY_PATH="$tools/usr/lib/x86_64-linux-gnu:$tools/lib/x86_64-linux-gnu"
# mmdebstrap runs its helpers (mmtarfilter) from PATH.
export PATH="$tools/usr/bin:$PATH"
if [ -z "${MCPBOX:-}" ]; then
  cargo build --release --quiet -p mcpbox --manifest-path "$root/Cargo.toml"
  MCPBOX="$root/target/release/mcpbox"
  product_check "$MCPBOX"
fi
work=$(mktemp -d)
storage="$work/storage"
buildah() {
  "$BUILDAH" --root "$storage" --runroot "$work/run" --storage-driver vfs "$@"
}
policy="$tools/etc/containers/policy.json"
container=
cleanup() {
  [ -n "$container" ] && buildah rm "$container" >/dev/null 2>&1 || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The base: libc6 and libgcc-s1 unpacked (no maintainer scripts run: there is nothing to
# configure), documentation left out.
perl "$MMDEBSTRAP" --quiet --variant=extract --include=libc6,libgcc-s1 \
  --dpkgopt='path-exclude=/usr/share/{doc,man,info,locale,lintian}/*' \
  bookworm "$work/rootfs.tar" >&2
mkdir -p "$work/rootfs"
tar -xf "$work/rootfs.tar" -C "$work/rootfs" --exclude='./dev/*'
rm -rf "$work/rootfs"/{etc/apt,var/cache/apt,var/lib/apt,usr/share/gcc,usr/lib/x86_64-linux-gnu/gconv}
# Who the process is: a user of its own, no shell, no home to write to.
# Mount points a runtime fills.
mkdir -p "$work/rootfs/proc" "$work/rootfs/sys" "$work/rootfs/dev"
mkdir -p "$work/rootfs/etc" "$work/rootfs/tmp" "$work/rootfs/var/cache/mcpbox" "$work/rootfs/var/lib/mcpbox/plugins"
chmod 1777 "$work/rootfs/tmp"
chown 65532:65532 "$work/rootfs/var/cache/mcpbox"
printf 'root:x:0:0:root:/root:/sbin/nologin\nmcpbox:x:65532:65532:mcpbox:/nonexistent:/sbin/nologin\n' > "$work/rootfs/etc/passwd"
printf 'root:x:0:\nmcpbox:x:65532:\n' > "$work/rootfs/etc/group"
install -D -m 0755 "$MCPBOX" "$work/rootfs/usr/local/bin/mcpbox"
# A release build carries no debug information already; a test build's line tables go.
strip --strip-debug "$work/rootfs/usr/local/bin/mcpbox" 2>/dev/null || true

container=$(buildah from --signature-policy "$policy" scratch)
buildah copy "$container" "$work/rootfs/" / >/dev/null
buildah config \
  --user 65532:65532 \
  --entrypoint '["/usr/local/bin/mcpbox"]' \
  --cmd '["serve", "--config=/etc/mcpbox/mcpbox.toml", "--http=0.0.0.0:8080", "--metrics=0.0.0.0:9090", "--log-format=json"]' \
  --env MCPBOX_CACHE_DIR=/var/cache/mcpbox \
  --port 8080/tcp --port 9090/tcp \
  --volume /var/cache/mcpbox --volume /tmp \
  --label org.opencontainers.image.title=mcpbox \
  --label org.opencontainers.image.description="MCP tools, resources and prompts from sandboxed WebAssembly components" \
  --label org.opencontainers.image.version="$("$MCPBOX" --version | awk '{print $2}')" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  "$container"
mkdir -p "$(dirname "$out")"
rm -f "$out"
buildah commit --quiet --signature-policy "$policy" --format oci "$container" "oci-archive:$out:mcpbox:latest" >/dev/null
echo "$out $(stat -c %s "$out") bytes"
