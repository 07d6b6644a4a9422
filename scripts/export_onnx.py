"""Exports a Hugging Face encoder (BERT-family) to ONNX for searchgate.

The graph outputs `last_hidden_state` (bi-encoders) or `logits`
(sequence-classification cross-encoders), the same names Hugging Face Optimum
uses, so a directory exported here and one downloaded from the Hub load through
the same code path in searchgate. Pooling happens in searchgate, not in the
graph, for that reason.

Usage: export_onnx.py <source-model-dir> <output-dir> [--cross-encoder]
"""

import sys
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer


def main() -> None:
    source, output = Path(sys.argv[1]), Path(sys.argv[2])
    cross_encoder = "--cross-encoder" in sys.argv[3:]
    loader = AutoModelForSequenceClassification if cross_encoder else AutoModel
    # Eager attention: the SDPA path traces shape checks into constants and
    # the exported graph then mishandles padded batches.
    model = loader.from_pretrained(source, local_files_only=True,
                                   attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    output_name = "logits" if cross_encoder else "last_hidden_state"

    sample = tokenizer(["a short probe", "a somewhat longer probe sentence for shapes"],
                       padding=True, return_tensors="pt")
    inputs = ("input_ids", "attention_mask", "token_type_ids")

    class Wrapped(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            result = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids)
            return result.logits if cross_encoder else result.last_hidden_state

    target = output / "model.onnx"
    dynamic = {name: {0: "batch", 1: "sequence"} for name in inputs}
    dynamic[output_name] = {0: "batch"} if cross_encoder else {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Wrapped(model), tuple(sample[name] for name in inputs), str(target),
                          input_names=list(inputs), output_names=[output_name],
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)

    # Parity check against PyTorch, so a broken export never reaches a user.
    import onnxruntime

    probe = tokenizer(["what is the capital of france",
                       "Paris is the capital and largest city of France. " * 20],
                      padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        reference = loader.from_pretrained(source, local_files_only=True,
                                           attn_implementation="eager").eval()
        result = reference(**probe)
        expected = (result.logits if cross_encoder else result.last_hidden_state).numpy()
    session = onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    actual = session.run([output_name], {name: probe[name].numpy() for name in inputs})[0]
    # Padding positions carry no meaning (pooling masks them out), so only
    # real tokens are compared.
    if not cross_encoder:
        real_tokens = probe["attention_mask"].numpy().astype(bool)
        expected, actual = expected[real_tokens], actual[real_tokens]
    worst = float(np.max(np.abs(expected - actual)))
    if worst > 1e-3:
        sys.exit(f"ONNX export differs from PyTorch by {worst}")
    print(f"exported {target} ({output_name}); max abs difference to PyTorch {worst:.2e}")


if __name__ == "__main__":
    main()
