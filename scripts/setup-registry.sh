#!/usr/bin/env bash
# An OCI distribution registry from Debian 12's packages (docker-registry 2.8.2), for the
# registry tests and docs/registries.md: unpacked into .tools/registry, never installed
# system-wide. Idempotent; prints the registry binary.
set -euo pipefail
exec "$(dirname "$0")/deb-into-tools.sh" registry docker-registry 2.8.2 usr/bin/docker-registry
