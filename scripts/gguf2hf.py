#!/usr/bin/env python3
"""Converts a GGUF model to a Hugging Face folder (config, float32 safetensors, tokenizer,
chat template) that vLLM loads: vLLM 0.32's core has no GGUF loader.

    python gguf2hf.py MODEL.gguf OUT_DIR

Run by scripts/vllm-server with the venv it sets up (transformers, torch, gguf, accelerate),
offline (HF_HUB_OFFLINE=1): everything comes from the GGUF file. Quantized weights are
dequantized to float32 (SmolLM2-135M Q4_1: 98 MB in, 538 MB out, ~30 s).
"""
import os
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: gguf2hf.py MODEL.gguf OUT_DIR")
    src, dst = sys.argv[1], sys.argv[2]
    folder, name = os.path.dirname(os.path.abspath(src)), os.path.basename(src)
    start = time.time()
    # transformers reads a GGUF's tokenizer and weights given its folder and file name.
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # The loaded model remembers it came from GGUF, and save_pretrained then refuses ("quantized
    # with GGUF and is not serializable"); its weights are already plain float32 tensors.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.dtype = "float32"
    model.save_pretrained(dst)
    tokenizer.save_pretrained(dst)
    if not tokenizer.chat_template:
        print(f"gguf2hf: warning: {src} has no chat template; /v1/chat/completions needs one",
              file=sys.stderr)
    print(f"gguf2hf: {src} -> {dst} in {time.time() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
