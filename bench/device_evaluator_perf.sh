#!/usr/bin/env bash
# The evaluator benchmarks of issue 9 in one go on a GPU machine: OUT_DIR [part ...]
#   parts: ttv_cuda ttv_cpu ttv_triton fidelity (default: all). Each part has its own time limit, so one
#   slow part cannot eat the others' time; logs and JSON land in OUT_DIR/<part>/.
set -uo pipefail
out=$1; shift
parts=${*:-ttv_cuda ttv_cpu ttv_triton fidelity}
export PYTHONPATH=$PWD
mkdir -p "$out"
{ date -u; git log -1 --format='%H %s' 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc; python -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  nvcc --version | tail -2; c++ --version | head -1; } > "$out/env.txt" 2>&1
for part in $parts; do
  mkdir -p "$out/$part"
  case $part in
    ttv_cuda)   cmd=(timeout 400 python -m bench.time_to_verdict "$out/$part" --backend cuda --jobs 3) ;;
    ttv_cpu)    cmd=(timeout 330 python -m bench.time_to_verdict "$out/$part" --backend cpu) ;;
    ttv_triton) cmd=(timeout 180 python -m bench.time_to_verdict "$out/$part" --backend triton --jobs 5) ;;
    fidelity)   cmd=(timeout 400 python -m bench.timing_fidelity "$out/$part") ;;
    *) echo "unknown part $part"; exit 2 ;;
  esac
  echo "\$ ${cmd[*]}" > "$out/$part/log.txt"
  t0=$(date +%s); "${cmd[@]}" >> "$out/$part/log.txt" 2>&1; rc=$?
  echo "rc=$rc wall_s=$(( $(date +%s) - t0 ))" | tee -a "$out/$part/log.txt"
done
