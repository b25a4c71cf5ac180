"""A model folder of a published model's shape with random weights, to measure speed (not
quality): python random_model.py SHAPE TOKENIZER_DIR OUT_DIR [--device cuda]

SHAPE: codellama-7b (the paper's best model: 32 layers of 4096, vocabulary 32016),
llama-350m (the same layout, 24 layers of 1024), gpt-neo-125m, starcoder-1b (gpt_bigcode,
multi-query). The tokenizer is copied from TOKENIZER_DIR (its ids stay below the vocabulary).
--device cuda makes the weights on the GPU (fast for big shapes); --bf16 stores them in
bfloat16 (half the file; both scorers compute in f32 all the same)."""
import shutil
import sys
from pathlib import Path

import torch
from transformers import (GPTBigCodeConfig, GPTBigCodeForCausalLM, GPTNeoConfig,
                          GPTNeoForCausalLM, LlamaConfig, LlamaForCausalLM)

shape, tok_dir, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
# --bf16: weights stored in bfloat16 (half the file; both scorers compute in f32 all the same)
bf16 = "--bf16" in sys.argv
torch.manual_seed(0)
torch.set_default_device(device)
if shape == "codellama-7b":
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32016, hidden_size=4096, intermediate_size=11008,
                                         num_hidden_layers=32, num_attention_heads=32,
                                         num_key_value_heads=32, max_position_embeddings=16384,
                                         rope_theta=1e6))
elif shape == "llama-350m":
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32016, hidden_size=1024, intermediate_size=2816,
                                         num_hidden_layers=24, num_attention_heads=16,
                                         num_key_value_heads=8, max_position_embeddings=4096,
                                         rope_theta=1e6))
elif shape == "gpt-neo-125m":
    model = GPTNeoForCausalLM(GPTNeoConfig(vocab_size=50257, hidden_size=768, num_layers=12, num_heads=12,
                                           attention_types=[[["global", "local"], 6]], window_size=256,
                                           max_position_embeddings=2048))
elif shape == "starcoder-1b":
    model = GPTBigCodeForCausalLM(GPTBigCodeConfig(vocab_size=49152, n_embd=2048, n_layer=24, n_head=16,
                                                   multi_query=True, n_positions=8192))
else:
    sys.exit(f"unknown shape {shape}")
if bf16:
    model = model.to(torch.bfloat16)
model.save_pretrained(out, max_shard_size="4GB")
shutil.copy(tok_dir / "tokenizer.json", out / "tokenizer.json")
print(shape, sum(p.numel() for p in model.parameters()) / 1e6, "M parameters ->", out)
