#!/bin/sh
# Four players on a machine of many cores, a local worker a core (issue 39: the plan's
# speed-up from 1 to 16 workers within 1.2x of the run's, and the answer within 5 % of
# the run's wall time after its last batch), as one prepared command for a machine that
# has Python 3 with numpy, numba, click, msgpack, psutil, pyyaml and the like but no
# network (the device machines of /work/.library/device): the packages it lacks come from
# the wheels in .whl/ (ignored by git; carry it), about 24 MB, made here with
#
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
#     dask==2026.8.0 distributed==2026.8.0 donfig==0.8.1.post1 gmpy2==2.3.2 \
#     google-crc32c==1.9.0 isal==1.9.1 locket==1.0.0 numcodecs==0.16.6 partd==1.4.2 \
#     python-flint==0.9.0 tblib==3.2.2 tornado==6.6.1 zarr==3.1.6 zict==3.0.0
#
# Tried on 2026-11-27 here, in a venv holding only what the device machine's image
# lists, with this machine's own wheels: three players, 11.6 s on 2 workers.
#
# Steps, each into $OUT (or /tmp where it is unset):
# 1. the kernels and the driver's half-gcd compiled once (about a minute), so that the
#    run times the run;
# 2. `ladders plan hasbro -k K --workers N --json` (plan.json): what the plan says;
# 3. `ladders solve hasbro -k K --workers N --checkpoint ... --json`: the run, N = the
#    cores (solve.json, the seats as SHA-256s; its progress lines in solve.log);
# 4. scripts/bench_load.py for K players, every core alone in turn and then all at once
#    (load.txt): a prime's CPU time alone, which the speed-up is measured against.
# scripts/bench_plan.py's SIXTEEN_CORES takes the run's primes, the prime alone and the
# wall time.
#
# Run: sh scripts/device_solve.sh [PLAYERS]   (default 4)
set -e
players=${1:-4}
out=${OUT:-/tmp}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/ladders-site .whl/*.whl
shim=/tmp/ladders-shims/this
mkdir -p "$shim"
ln -sfn "$PWD" "$shim/ladders"
export PYTHONPATH="$shim:/tmp/ladders-site" PYTHONUNBUFFERED=1
python3 -c "import sys, numba, numpy, gmpy2, flint, dask, zarr; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__, 'dask', dask.__version__, 'zarr', zarr.__version__)"
cores=$(nproc)
echo "cores: $cores"
lscpu | grep -E "Model name|cache|NUMA node\(s\)" || true
echo "compiling: $(date +%T)"
python3 -c "
import ladders.solver.engines.series.warm
from ladders.solver.engines.series.reconstruct import rational_reconstruct
rational_reconstruct((1 << 19999) + 12345, (1 << 20001) + 1)   # the driver's half-gcd
"
echo "compiled: $(date +%T)"
python3 -m ladders.cluster.cli plan hasbro -k "$players" --workers "$cores" --json \
    > "$out/plan.json"
rm -rf "/tmp/device-h$players"
start=$(date +%s.%N)
python3 -m ladders.cluster.cli solve hasbro -k "$players" --workers "$cores" \
    --checkpoint "/tmp/device-h$players" --json > /tmp/device-solve.json 2> "$out/solve.log"
end=$(date +%s.%N)
echo "solved: $(date +%T), $(python3 -c "print(round($end - $start, 1))") s end to end"
# the answer itself is 37 MB at four players, more than a file that comes back: its
# SHA-256s instead (docs/series.md has them)
python3 -c "
import hashlib, json
doc = json.load(open('/tmp/device-solve.json'))
doc['seats'] = [{'seat': s['seat'], 'sha256': hashlib.sha256(s['exact'].encode()).hexdigest()}
                for s in doc['seats']]
json.dump(doc, open('$out/solve.json', 'w'), indent=1)
print(json.dumps({k: doc[k] for k in ('seconds', 'startup_seconds') if k in doc}),
      doc['verified']['passed'], doc['details']['primes'], doc['details']['attempts'][-1])
"
tail -3 "$out/solve.log"
python3 scripts/bench_load.py --players "$players" --processes "$cores" --primes 40 \
    --rounds 2 | tee "$out/load.txt"
