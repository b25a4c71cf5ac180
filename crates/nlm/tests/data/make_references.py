"""References for the families and formats that shared/reference/nlm does not cover, made with
transformers (and gguf-py for the GGUF files). Run by hand, not by CI:

    python -m venv /tmp/ref && /tmp/ref/bin/pip install torch transformers gguf safetensors accelerate
    /tmp/ref/bin/python crates/nlm/tests/data/make_references.py ../shared/reference/nlm crates/nlm/tests/data

Writes, beside this script:
- bigcode/ and bigcode_mha/: tiny gpt_bigcode models (multi-query attention as StarCoder, and
  fused per-head attention), random weights with every bias and norm perturbed so that each part
  of the forward pass moves the loss, 256 positions (so the longest methods are truncated);
- gguf/llama-q8_0.gguf, gguf/llama-q4_0.gguf: the reference's tiny llama written as llama.cpp's
  converter writes a llama (query and key rows permuted for interleaved rotary pairs), its
  SentencePiece-style tokenizer as `tokenizer.ggml.model = llama` with scores and no merges;
- gguf/llama-gpt2-q8_0.gguf: the same weights with the reference gpt_neo's byte-level BPE as
  `tokenizer.ggml.model = gpt2` with merges (as SmolLM2 and StarCoder files carry theirs);
- expected.json: per model, the token ids and the cross-entropy of every method of
  methods.json by the published recipe (tokenize, no special tokens, truncate, `loss`), the
  GGUF files loaded by transformers itself (`gguf_file=`: its tokenizer built from the file's
  metadata, its weights dequantized to f32).
"""
import json
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import (AutoModelForCausalLM, AutoTokenizer, GPTBigCodeConfig,
                          GPTBigCodeForCausalLM)

ref, out = Path(sys.argv[1]), Path(sys.argv[2])
methods = json.load(open(ref / "methods.json"))
torch.set_num_threads(2)


def published(model, tok, max_len):
    """The published tool's cross-entropy: no special tokens, truncated, transformers' loss."""
    rows = []
    with torch.no_grad():
        for text in methods:
            ids = tok.convert_tokens_to_ids(tok.tokenize(text))[:max_len]
            t = torch.tensor(ids)[None, :]
            rows.append({"ids": ids, "ce_nats": model(input_ids=t, labels=t).loss.item()})
    return {"max_len": max_len, "ids": [r["ids"] for r in rows], "ce_nats": [r["ce_nats"] for r in rows]}


expected = {}

# --- gpt_bigcode ----------------------------------------------------------------------------
for name, multi_query in (("bigcode", True), ("bigcode_mha", False)):
    torch.manual_seed(7)
    cfg = GPTBigCodeConfig(vocab_size=2048, n_positions=256, n_embd=64, n_layer=2, n_head=4,
                           multi_query=multi_query, initializer_range=0.15,
                           activation_function="gelu_pytorch_tanh", bos_token_id=0, eos_token_id=0)
    model = GPTBigCodeForCausalLM(cfg).eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "wte" in pname:
                continue
            p.add_(0.05 * torch.randn_like(p))
    d = out / name
    model.save_pretrained(d)
    tok = AutoTokenizer.from_pretrained(ref / "models" / "gptneo")
    tok.save_pretrained(d)
    for extra in ("tokenizer_config.json", "generation_config.json", "special_tokens_map.json"):
        (d / extra).unlink(missing_ok=True)
    expected[name] = published(model, tok, 256)
    print(name, min(expected[name]["ce_nats"]), max(expected[name]["ce_nats"]))

# --- GGUF -----------------------------------------------------------------------------------
import gguf  # noqa: E402

llama_dir = ref / "models" / "llama"
cfg = json.load(open(llama_dir / "config.json"))
state = AutoModelForCausalLM.from_pretrained(llama_dir, dtype=torch.float32).state_dict()
n_head, n_kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]


def permute(w, heads):
    """llama.cpp's converter: each head's rows reordered so that interleaved pairs rotate as
    transformers' halves do."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def spm_vocab(tokenizer_json):
    """The vocabulary as a SentencePiece model spells it: every piece with the score of its
    order (-id) and its type (control, byte, normal)."""
    tj = json.load(open(tokenizer_json))
    vocab = sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])
    special = {t["content"] for t in tj["added_tokens"] if t["special"]}
    tokens, scores, types = [], [], []
    for piece, i in vocab:
        tokens.append(piece)
        scores.append(0.0 if piece in special else -float(i))
        if piece == "<unk>":
            types.append(gguf.TokenType.UNKNOWN)
        elif piece in special:
            types.append(gguf.TokenType.CONTROL)
        elif piece.startswith("<0x") and piece.endswith(">") and len(piece) == 6:
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
    return tokens, scores, types


def bpe_vocab(tokenizer_json):
    """A byte-level BPE as llama.cpp's converter writes one: tokens, types and merges."""
    tj = json.load(open(tokenizer_json))
    vocab = sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])
    special = {t["content"] for t in tj["added_tokens"] if t["special"]}
    tokens = [p for p, _ in vocab]
    types = [gguf.TokenType.CONTROL if p in special else gguf.TokenType.NORMAL for p in tokens]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    return tokens, types, merges


def write_gguf(path, qtype, tokenizer):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("natstudy tiny llama")
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_rope_dimension_count(cfg["head_dim"])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_parameters"]["rope_theta"])
    w.add_vocab_size(cfg["vocab_size"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if qtype == gguf.GGMLQuantizationType.Q8_0
                    else gguf.LlamaFileType.MOSTLY_Q4_0)
    if tokenizer == "llama":
        tokens, scores, types = spm_vocab(llama_dir / "tokenizer.json")
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_unk_token_id(0)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
    else:
        tokens, types, merges = bpe_vocab(ref / "models" / "gptneo" / "tokenizer.json")
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(0)
        w.add_eos_token_id(0)

    def tensor(name, t, quantize=True):
        a = t.detach().numpy().astype(np.float32)
        if quantize and a.ndim == 2:
            w.add_tensor(name, gguf.quants.quantize(a, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(name, a)

    tensor("token_embd.weight", state["model.embed_tokens.weight"])
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        tensor(f"blk.{i}.attn_norm.weight", state[p + "input_layernorm.weight"])
        tensor(f"blk.{i}.attn_q.weight", permute(state[p + "self_attn.q_proj.weight"], n_head))
        tensor(f"blk.{i}.attn_k.weight", permute(state[p + "self_attn.k_proj.weight"], n_kv))
        tensor(f"blk.{i}.attn_v.weight", state[p + "self_attn.v_proj.weight"])
        tensor(f"blk.{i}.attn_output.weight", state[p + "self_attn.o_proj.weight"])
        tensor(f"blk.{i}.ffn_norm.weight", state[p + "post_attention_layernorm.weight"])
        tensor(f"blk.{i}.ffn_gate.weight", state[p + "mlp.gate_proj.weight"])
        tensor(f"blk.{i}.ffn_up.weight", state[p + "mlp.up_proj.weight"])
        tensor(f"blk.{i}.ffn_down.weight", state[p + "mlp.down_proj.weight"])
    tensor("output_norm.weight", state["model.norm.weight"])
    tensor("output.weight", state["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


(out / "gguf").mkdir(parents=True, exist_ok=True)
for name, qtype, tokenizer in (
    ("llama-q8_0", gguf.GGMLQuantizationType.Q8_0, "llama"),
    ("llama-q4_0", gguf.GGMLQuantizationType.Q4_0, "llama"),
    ("llama-gpt2-q8_0", gguf.GGMLQuantizationType.Q8_0, "gpt2"),
):
    path = out / "gguf" / f"{name}.gguf"
    write_gguf(path, qtype, tokenizer)
    tok = AutoTokenizer.from_pretrained(out / "gguf", gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(out / "gguf", gguf_file=path.name, dtype=torch.float32).eval()
    expected[name] = published(model, tok, cfg["max_position_embeddings"])
    print(name, min(expected[name]["ce_nats"]), max(expected[name]["ce_nats"]))

json.dump(expected, open(out / "expected.json", "w"))
