#!/bin/sh
# The series kernel under load on a machine of many cores (issue 39's second item), as
# one prepared command for a machine that has Python 3 with numpy and numba but no
# network: scripts/bench_load.py with a process on every core, this tree against the
# trees in .base/*/ (copies of earlier commits: `git archive COMMIT | tar -x -C
# .base/COMMIT`), gmpy2 and python-flint from the wheels in .whl/ (`pip download
# --no-deps --only-binary=:all: --python-version 3.12 ... gmpy2 python-flint`).
# Each tree's kernel is compiled first, all at once (a minute each, on cores of their
# own). Output: stdout and, where $OUT is set, $OUT/load.txt.
#
# Run: sh scripts/device_load.sh [PLAYERS [PRIMES [ROUNDS]]]   (default 5,4 6 2)
set -e
players=${1:-5,4}
primes=${2:-6}
rounds=${3:-2}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/ladders-site .whl/*.whl
shims=/tmp/ladders-shims
mkdir -p "$shims/this"
ln -sfn "$PWD" "$shims/this/ladders"
export PYTHONPATH="/tmp/ladders-site"
python3 -c "import sys, numba, numpy, gmpy2, flint; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__)"
nproc
lscpu | grep -E "Model name|cache|NUMA node\(s\)" || true
baselines=""
for tree in .base/*/; do
    name=$(basename "$tree")
    mkdir -p "$shims/$name"
    ln -sfn "$PWD/$tree" "$shims/$name/ladders"
    baselines="$baselines --baseline $tree"
done
for shim in "$shims"/*/; do
    PYTHONPATH="$shim:$PYTHONPATH" python3 -c "import ladders.solver.engines.series.warm" &
done
wait
echo "compiled: $(date +%T)"
PYTHONPATH="$shims/this:$PYTHONPATH" python3 scripts/bench_load.py --players "$players" \
    --processes "$(nproc)" --primes "$primes" --rounds "$rounds" $baselines \
    | tee "${OUT:-/tmp}/load.txt"
