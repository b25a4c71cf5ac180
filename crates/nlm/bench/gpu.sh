#!/usr/bin/env bash
# The GPU check of natstudy's neural scorer, as one script for a lent GPU machine (run from the
# repository root; OUT: where results go). Needs there: python3 with torch and transformers, and
# carried in .device/: score.xz (`cargo build --release -p natstudy-nlm --features cuda
# --example score`, stripped, xz) and nlm-ref/ (a copy of shared/reference/nlm). Each step has
# its own time limit, so one that hangs does not take the rest with it. SECTIONS picks the
# parts (default all): ref (the reference models on the GPU), cpu (natstudy against transformers
# on the CPU), gpu (the same on the GPU), cl7b (a CodeLlama-7B-shaped model on the GPU).
set -u
SECTIONS=${SECTIONS:-ref cpu gpu cl7b}
on() { [[ " $SECTIONS " == *" $1 "* ]]; }
OUT=${OUT:-/tmp/nlm-gpu}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
B=${B:-.device/score} R=.device/nlm-ref D=crates/nlm/tests/data P=python3 H=crates/nlm/bench
M=$R/methods.json
T=${THREADS:-$(nproc)}
step() { echo; echo "== $(date +%T) $*"; }
PEAK="$P $H/peak.py"   # a command's peak resident memory, after it ends
[ -x $B ] || $P -c 'import lzma, shutil; shutil.copyfileobj(lzma.open(".device/score.xz"), open(".device/score", "wb"))'
chmod +x $B
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core)'; echo "threads for both: $T"
$P -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
lib=$(find / -name 'libcublas.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
export LD_LIBRARY_PATH="$(dirname "$lib"):/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ldd $B | grep -E 'not found|cuda|cublas|curand'
nvidia-smi --query-gpu=memory.used --format=csv,noheader -lms 500 > "$OUT/gpu-memory.txt" &
NV=$!

if on ref; then
step "1. the reference models on the GPU against transformers' CE (computed on the CPU)"
for m in llama gptneo bloom; do
  timeout 60 $B --model $R/models/$m --methods $M --device cuda --rounds 1 --out "$OUT/gpu-$m.json" | tail -1
  $P $H/compare.py "$OUT/gpu-$m.json" $R/expected_ce.json $m
done
for m in bigcode bigcode_mha; do
  timeout 60 $B --model $D/$m --methods $M --device cuda --rounds 1 --out "$OUT/gpu-$m.json" | tail -1
  $P $H/compare.py "$OUT/gpu-$m.json" $D/expected.json $m
done
for m in llama-q8_0 llama-q4_0; do
  timeout 60 $B --model $D/gguf/$m.gguf --methods $M --device cuda --rounds 1 --out "$OUT/gpu-$m.json" | tail -1
  $P $H/compare.py "$OUT/gpu-$m.json" $D/expected.json $m
done

fi

for shape in gpt-neo-125m:gptneo llama-350m:llama; do
  s=${shape%%:*} tok=${shape##*:}
  { on cpu || on gpu; } && timeout 120 $P $H/random_model.py $s $R/models/$tok /tmp/$s | tail -1
done
if on cpu; then
step "2. CPU, $T threads: natstudy (its batches, a thread each) against transformers (one method at a time, $T threads)"
for s in gpt-neo-125m llama-350m; do
  timeout 150 $PEAK $B --model /tmp/$s --methods $M --device cpu --threads $T --rounds 2 --out "$OUT/cpu-$s-natstudy.json"
  timeout 150 $PEAK $P $H/transformers_score.py /tmp/$s $M "$OUT/cpu-$s-transformers.json" --threads $T --rounds 2
  $P $H/compare.py "$OUT/cpu-$s-natstudy.json" "$OUT/cpu-$s-transformers.json"
done
fi

if on gpu; then
step "3. GPU: the same two"
for s in gpt-neo-125m llama-350m; do
  timeout 90 $B --model /tmp/$s --methods $M --device cuda --batch 1 --rounds 3 --out "$OUT/gpu-$s-natstudy.json"
  timeout 90 $B --model /tmp/$s --methods $M --device cuda --batch 8 --rounds 3
  timeout 90 $P $H/transformers_score.py /tmp/$s $M "$OUT/gpu-$s-transformers.json" --device cuda --rounds 3
  $P $H/compare.py "$OUT/gpu-$s-natstudy.json" "$OUT/gpu-$s-transformers.json"
done
fi
rm -rf /tmp/gpt-neo-125m /tmp/llama-350m
if on cl7b; then
step "4. GPU: a CodeLlama-7B-shaped model (weights stored in bf16, computed in f32)"
timeout 240 $P $H/random_model.py codellama-7b $R/models/llama /tmp/codellama-7b --device cuda --bf16 | tail -1
du -sh /tmp/codellama-7b
timeout 150 $PEAK $B --model /tmp/codellama-7b --methods $M --device cuda --batch 1 --rounds 2 --out "$OUT/gpu-cl7b-natstudy.json"
timeout 120 $B --model /tmp/codellama-7b --methods $M --device cuda --batch 8 --rounds 2
timeout 150 $P $H/transformers_score.py /tmp/codellama-7b $M "$OUT/gpu-cl7b-transformers.json" --device cuda --rounds 2
$P $H/compare.py "$OUT/gpu-cl7b-natstudy.json" "$OUT/gpu-cl7b-transformers.json"
fi
kill $NV 2>/dev/null
sort -n "$OUT/gpu-memory.txt" | tail -1 | sed 's/^/peak GPU memory in use: /'
step done
