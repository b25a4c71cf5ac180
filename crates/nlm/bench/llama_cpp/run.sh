#!/usr/bin/env bash
# llama.cpp's side of the GGUF comparison (#41), run by hand: builds llama.cpp's library from
# the sources the `llama-cpp-sys-2` crate ships (fetched by cargo from the registry the machine
# is configured with; the crate leaves out llama-bench,
# so score.cpp drives llama.h itself), then scores the same methods as natstudy's
# `examples/score` with the same threads.
#
#   crates/nlm/bench/llama_cpp/run.sh MODEL.gguf METHODS.json THREADS
#
# Needs cmake (`pip install cmake`), a C++ compiler and python3. Prints tokens/s for every
# position's logits (what scoring needs) and for the last position's only (llama-bench's
# prompt processing), and writes llama_ce.txt (CE in nats per method) to compare.
set -euo pipefail
model=$1 methods=$2 threads=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=${LLAMA_WORK:-/tmp/natstudy-llama-cpp}
mkdir -p "$work" && cd "$work"
version=0.1.161
if [ ! -d "llama-cpp-sys-2-$version" ]; then
  # a throwaway manifest that depends on the crate: cargo fetches it through the machine's
  # registry configuration (mirrors, offline caches) into its cache, where the .crate is a
  # gzipped tarball of the sources
  mkdir -p fetch/src && : > fetch/src/lib.rs
  printf '[package]\nname = "fetch-llama"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nllama-cpp-sys-2 = "=%s"\n[workspace]\n' \
    "$version" > fetch/Cargo.toml
  cargo fetch --manifest-path fetch/Cargo.toml
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"llama-cpp-sys-2-$version.crate" | head -n 1)
  tar xzf "$crate"
fi
src="llama-cpp-sys-2-$version/llama.cpp"
if [ ! -f "$src/build/src/libllama.a" ]; then
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_OPENSSL=OFF \
    -DBUILD_SHARED_LIBS=OFF
  cmake --build "$src/build" --target llama -j "$(nproc)"
fi
g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" "$here/score.cpp" \
  "$src/build/src/libllama.a" "$src/build/ggml/src/libggml.a" \
  "$src/build/ggml/src/libggml-cpu.a" "$src/build/ggml/src/libggml-base.a" \
  -fopenmp -lpthread -ldl -o llama-score
python3 -c 'import json,sys; open("methods.nul","w").write("\0".join(json.load(open(sys.argv[1]))))' "$methods"
./llama-score "$model" methods.nul "$threads" 3
./llama-score "$model" methods.nul "$threads" 3 --last
