"""Quantizes an exported bi-encoder (export_onnx.py) to int8 for searchgate.

Dynamic quantization (onnxruntime.quantization.quantize_dynamic): the MatMul weights are stored as
int8, one scale per output channel, and each activation is quantized on the fly; ONNX Runtime then
runs the matrix products as u8 × s8 integer products, which AVX-512 VNNI and AVX-VNNI do several
times faster than fp32. Choices, measured on all-MiniLM-L6-v2 (docs/reranker.md):

- per channel: one scale per tensor moved the embeddings to a mean cosine of 0.936 to fp32 (200
  SciFact abstracts); one per channel keeps 0.995;
- MatMul only: the embedding tables (Gather) stay fp32, they cost nothing to run;
- no ORT transformer fusion first (onnxruntime.transformers.optimizer, Attention/SkipLayerNorm/
  BiasGelu): ONNX Runtime's own graph optimizations at load do as well on the CPU, and the int8 graph
  of the fused model (QAttention) was about 10% slower per token;
- signed weights, full range (no reduce_range): the 7-bit range only helps CPUs without VNNI.

The result is checked against the fp32 graph on probe sentences, so a broken quantization never
reaches a user.

Usage: quantize_onnx.py <fp32 model.onnx> <int8 output.onnx> <tokenizer dir>
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import AutoTokenizer

# Below this cosine between an int8 and an fp32 embedding, the quantized graph is refused.
MIN_COSINE = 0.97

PROBES = [
    "what is the capital of france",
    "Paris is the capital and largest city of France.",
    "Bananas are rich in potassium.",
    "Berlin is the capital of Germany.",
    "Microstructural development of human newborn cerebral white matter assessed in vivo by "
    "diffusion tensor magnetic resonance imaging. Alterations of the architecture of cerebral white "
    "matter in the developing human brain can affect cortical development and result in functional "
    "disabilities. " * 3,
    "The committee reviewed the annual budget in detail, line by line, and approved it.",
]


def embed(model: Path, tokenizer, output: str) -> np.ndarray:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    batch = tokenizer(PROBES, padding=True, truncation=True, max_length=256, return_tensors="np")
    names = {item.name for item in session.get_inputs()}
    feeds = {name: batch[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids") if name in names}
    hidden = session.run([output], feeds)[0]
    mask = batch["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main() -> None:
    source, target, tokenizer_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    quantize_dynamic(
        str(source),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=False,
        op_types_to_quantize=["MatMul"],
    )
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
    reference = embed(source, tokenizer, "last_hidden_state")
    quantized = embed(target, tokenizer, "last_hidden_state")
    cosines = (reference * quantized).sum(axis=1)
    worst = float(cosines.min())
    if worst < MIN_COSINE:
        sys.exit(f"int8 model differs from fp32: cosine {worst:.4f} on a probe (at least {MIN_COSINE} required)")
    size = target.stat().st_size / 2**20
    print(f"quantized {target} ({size:.1f} MiB); cosine to fp32 on {len(PROBES)} probes: min {worst:.4f}, mean {float(cosines.mean()):.4f}")


if __name__ == "__main__":
    main()
