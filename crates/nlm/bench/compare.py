"""Compares two score files (natstudy's `--out` and transformers_score.py's, or an expected
file's `ce_nats` under KEY): the worst relative difference of the cross-entropies.
  python compare.py A.json B.json [KEY]"""
import json
import sys

a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
if len(sys.argv) > 3:
    b = [{"ce_nats": c} for c in b[sys.argv[3]]["ce_nats"]]
worst = max(abs(x["ce_nats"] - y["ce_nats"]) / abs(y["ce_nats"]) for x, y in zip(a, b))
print(f"{sys.argv[1]} vs {sys.argv[2]} {sys.argv[3] if len(sys.argv) > 3 else ''}: "
      f"{len(a)} methods, worst relative difference {worst:.2e}")
