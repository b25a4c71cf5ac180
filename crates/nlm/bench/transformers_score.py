"""transformers' side of the speed comparison: the published recipe (tokenize, no special tokens,
truncate to the model's length, `model(ids, labels=ids).loss`), one method at a time as the
published tool runs them (or `--batch B` methods padded on the right per forward pass, each
method's loss over its own tokens), f32, on the CPU with N threads or on the GPU. MODEL is a
model folder or a GGUF file (dequantized to f32 by transformers; needs the `gguf` package).
  python transformers_score.py MODEL methods.json OUT.json [--device cuda] [--threads N] [--rounds R] [--batch B]"""
import json
import os
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model_dir, methods_path, out_path = sys.argv[1:4]
arg = lambda k, d: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else d  # noqa: E731
device, threads, rounds = arg("--device", "cpu"), int(arg("--threads", "0")), int(arg("--rounds", "2"))
batch = int(arg("--batch", "1"))
if threads:
    torch.set_num_threads(threads)
t0 = time.time()
where = {}
if model_dir.endswith(".gguf"):
    model_dir, where = os.path.dirname(os.path.abspath(model_dir)), {"gguf_file": os.path.basename(model_dir)}
tok = AutoTokenizer.from_pretrained(model_dir, **where)
model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, **where).to(device).eval()
cfg = model.config
max_len = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or 512
load = time.time() - t0
methods = json.load(open(methods_path))
ids = [tok.convert_tokens_to_ids(tok.tokenize(m))[:max_len] for m in methods]
rows, report = [], []
with torch.no_grad():
    for r in range(rounds):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.time()
        ce = []
        if batch == 1:
            for x in ids:
                t = torch.tensor(x, device=device)[None, :]
                ce.append(model(input_ids=t, labels=t).loss.item())
        for at in range(0, len(ids) if batch > 1 else 0, batch):
            group = ids[at:at + batch]
            width = max(len(x) for x in group)
            t = torch.tensor([x + [0] * (width - len(x)) for x in group], device=device)
            mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in group], device=device)
            logits = model(input_ids=t, attention_mask=mask).logits.float()
            for i, x in enumerate(group):
                n = len(x)
                ce.append(torch.nn.functional.cross_entropy(logits[i, :n - 1], t[i, 1:n]).item())
        secs = time.time() - start
        n = sum(len(x) for x in ids)
        report.append(f"round {r + 1}: {len(ids)} methods, {n} tokens in {secs:.3f} s = {n / secs:.0f} tokens/s")
        print(report[-1], flush=True)
        rows = [{"tokens": len(x), "ce_nats": c} for x, c in zip(ids, ce)]
# untimed: each method's cross-entropy in f64 from the same f32 logits (the f32 log-softmax
# drops the vocabulary's many tiny terms: about 3e-6 too low on SmolLM2's 49,152 tokens)
with torch.no_grad():
    for row, x in zip(rows, ids):
        t = torch.tensor(x, device=device)[None, :]
        logits = model(input_ids=t).logits[0, :-1].double()
        row["ce_nats_f64"] = torch.nn.functional.cross_entropy(logits, t[0, 1:]).item()
json.dump(rows, open(out_path, "w"))
print(f"transformers {torch.__version__} on {device}, {torch.get_num_threads()} threads, "
      f"{'one method' if batch == 1 else f'{batch} methods'} a pass, loaded in {load:.2f} s")
