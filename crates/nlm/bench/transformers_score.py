"""transformers' side of the speed comparison: the published recipe (tokenize, no special tokens,
truncate to the model's length, `model(ids, labels=ids).loss`), one method at a time as the
published tool runs them, f32, on the CPU with N threads or on the GPU.
  python transformers_score.py MODEL methods.json OUT.json [--device cuda] [--threads N] [--rounds R]"""
import json
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model_dir, methods_path, out_path = sys.argv[1:4]
arg = lambda k, d: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else d  # noqa: E731
device, threads, rounds = arg("--device", "cpu"), int(arg("--threads", "0")), int(arg("--rounds", "2"))
if threads:
    torch.set_num_threads(threads)
t0 = time.time()
tok = AutoTokenizer.from_pretrained(model_dir)
model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
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
        for x in ids:
            t = torch.tensor(x, device=device)[None, :]
            ce.append(model(input_ids=t, labels=t).loss.item())
        secs = time.time() - start
        n = sum(len(x) for x in ids)
        report.append(f"round {r + 1}: {len(ids)} methods, {n} tokens in {secs:.3f} s = {n / secs:.0f} tokens/s")
        print(report[-1], flush=True)
        rows = [{"tokens": len(x), "ce_nats": c} for x, c in zip(ids, ce)]
json.dump(rows, open(out_path, "w"))
print(f"transformers {torch.__version__} on {device}, {torch.get_num_threads()} threads, loaded in {load:.2f} s")
