#!/usr/bin/env bash
# Issue 26/27 device work in one call: OUT_DIR PART[=SECONDS] ...   (each part has its own time limit)
#   gputests      tests/gpu (honest examples incl. the small CNN, adversarial GPU cases)
#   adversarial   the adversarial GPU cases alone
#   explain       the kernels in $RW_EXPLAIN again with KernelBench's own fixed tolerance (atol = rtol = 1e-2)
#   after         bench.realworld_sweep run over .rw (a copy of ../shared/realworld), this checkout
#   rest          the same, skipping kernels already in bench/results/$RW_DONE/rows_after*.jsonl
#   before        a 16-kernel sample ($RW_SAMPLE) through .before (the previous main, af893d9), then this checkout
#   single        8 kernels, each one `kforge eval` with a fresh build cache (new source -> verdict, CLI)
# Everything lands in OUT_DIR/work and comes back as OUT_DIR/results.tgz (the device returns 8 files at most).
set -uo pipefail
out=$1; shift
work=$out/work
mkdir -p "$work"
export PYTHONPATH=$PWD KFORGE_CACHE_DIR=/tmp/kfc KFORGE_TEST_CACHE_DIR=/tmp/kfc TORCH_CUDA_ARCH_LIST=9.0a
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  python -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  nvcc --version | tail -2; c++ --version | head -1; } > "$work/env.txt" 2>&1
for spec in "$@"; do
  part=${spec%%=*}; limit=${spec#*=}; [ "$limit" = "$spec" ] && limit=300
  mkdir -p "$work/$part"
  case $part in
    gputests) cmd=(python -m pytest -q -s tests/gpu/test_honest_examples.py tests/gpu/test_adversarial_gpu.py
                   -p no:cacheprovider) ;;
    explain)  cmd=(python -m bench.realworld_sweep run "$work/$part" --root .rw --tag kernelbench_tolerance --only "$RW_EXPLAIN"
                   --settings '{"error_model": "fixed", "tolerances": {"float32": [0.01, 0.01]}}') ;;
    adversarial) cmd=(python -m pytest -q -s tests/gpu/test_adversarial_gpu.py -p no:cacheprovider) ;;
    after)    cmd=(python -m bench.realworld_sweep run "$work/$part" --root .rw --tag after) ;;
    rest)     cmd=(python -m bench.realworld_sweep run "$work/$part" --root .rw --tag after
                   --skip bench/results/${RW_DONE:-none}/rows_after*.jsonl) ;;
    before)   cmd=(bash -c "KFORGE_CACHE_DIR=/tmp/kfc_before TORCH_EXTENSIONS_DIR=/tmp/kfc_before/ext PYTHONPATH=$PWD/.before python bench/realworld_sweep.py run $work/$part --root .rw --tag before --sample ${RW_SAMPLE:-16} \
                   && python -m bench.realworld_sweep run $work/$part --root .rw --tag after_sample --sample ${RW_SAMPLE:-16}") ;;
    single)   cmd=(bash -c 'i=0; python - <<"PY" | while read -r prob kern; do
import json
rows = sorted((json.loads(l) for l in open(".rw/manifest.jsonl")), key=lambda r: r["kernel"])
for r in rows[::23][:8]:
    print(r["problem"], r["kernel"])
PY
        i=$((i+1)); c=$(mktemp -d); t0=$(date +%s%N)
        KFORGE_CACHE_DIR=$c python -m kforge_core eval --problem .rw/$prob --candidate .rw/$kern --backend cuda \
            --no-compile --json '"$work/$part"'/eval_$i.json > '"$work/$part"'/eval_$i.txt 2>&1
        echo "$kern rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
      done') ;;
    *) echo "unknown part $part"; exit 2 ;;
  esac
  echo "\$ ${cmd[*]}  (limit ${limit}s)" > "$work/$part/log.txt"
  t0=$(date +%s); KFORGE_RESULTS_DIR=$work/$part timeout "$limit" "${cmd[@]}" >> "$work/$part/log.txt" 2>&1; rc=$?
  echo "$part rc=$rc wall_s=$(( $(date +%s) - t0 ))" | tee -a "$work/$part/log.txt" "$work/parts.txt"
done
tar -czf "$out/results.tgz" -C "$work" .
tail -c 3000 "$work"/*/log.txt > "$out/tails.txt" 2>&1
