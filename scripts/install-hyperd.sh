#!/usr/bin/env bash
# Installs the hyperd server executable into .hyperd/hyperd at the repo root
# (`make hyperd`). The tests and HyperProcess find it there, or through
# HYPERD_PATH.
#
# One installer serves both: the Node package's own
# (hyperdb-api-node/scripts/install-hyperd.mjs, `npx hyperdb-api-install-hyperd`
# for npm users) holds the pin (tableauhyperapi version and wheel sha256),
# fetches the wheel with pip, verifies it and extracts only hyperd.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v node >/dev/null 2>&1 || {
    echo "error: Node.js (20+) is required to install hyperd" >&2
    exit 1
}
exec node "${ROOT}/hyperdb-api-node/scripts/install-hyperd.mjs" --dir "${ROOT}/.hyperd" >/dev/null
