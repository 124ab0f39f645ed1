#!/usr/bin/env bash
# Soak benchmark (numbers, not pass/fail; not part of ./test.sh): scripts/soak.py for MINUTES (15 by
# default). Results go in RELIABILITY.md by hand, with the date and commit.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
./build.sh
. scripts/test-env.sh
PYTHONPATH="$PWD/tests/e2e" "$VENV/bin/python" scripts/soak.py "${1:-15}"
