#!/bin/sh
# The device side of a GPU run, in a bundle of bench/gpu_prepare.py:
#   sh bench/gpu_run.sh OUT SECONDS [gpu_run.py options]
# runs bench/gpu_run.py again after a hung program or a kernel fault (exit code 3) until
# every program has a result or SECONDS have passed, then prints the table.
out=${1:-gpu-out}; seconds=${2:-360}; shift 2
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/python" XLA_PYTHON_CLIENT_PREALLOCATE=false
end=$(( $(date +%s) + seconds ))
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
python3 -c "import cuda.bindings, jax; print('cuda-bindings', cuda.bindings.__version__, 'jax', jax.__version__)"
for try in 1 2 3 4 5 6 7 8; do
    python3 bench/gpu_run.py --out "$out" --end-time "$end" "$@"
    rc=$?
    [ "$rc" -eq 3 ] || break
    echo "gpu_run.py ended with code 3 (try $try): resuming"
done
exit $rc
