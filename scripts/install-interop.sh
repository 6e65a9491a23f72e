#!/usr/bin/env bash
# Installs Tableau's Python Hyper API into .hyperd/pylib for the interop test
# (tests/live/interop.rs), which reads our .hyper files through it. Hash-pinned;
# a no-op when already installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="$root/.hyperd/pylib"
if [ -f "$target/.installed" ]; then
  echo "tableauhyperapi already installed in $target"
  exit 0
fi
rm -rf "$target.tmp"
python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
  --require-hashes --only-binary=:all: --target "$target.tmp" \
  -r "$root/scripts/interop-requirements.txt"
rm -rf "$target"
mv "$target.tmp" "$target"
touch "$target/.installed"
echo "Installed tableauhyperapi into $target"
