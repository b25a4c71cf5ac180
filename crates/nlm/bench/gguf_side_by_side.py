"""A GGUF file scored side by side, run by hand (issue #72's table): natstudy with the file's
projections packed (`natstudy bench lm-neural --gguf packed`), natstudy on an f32 safetensors copy
of the file's dequantized weights (what transformers makes of it), and transformers on the same
file dequantized to f32, one method at a time and 8 padded per batch. Every run is its own
process, on the same methods and threads; the tools take turns round by round (interleaved, so
that a slow minute of the machine falls on all of them); each run scores the methods twice and
its second pass is timed. Prints a markdown table: tokens/s and peak memory (the kernel's
`ru_maxrss`) over the rounds, and each row's worst relative difference of the cross-entropies
from transformers' one at a time.

  python gguf_side_by_side.py --gguf SmolLM2-135M-Instruct.Q4_1.gguf \\
      --methods shared/reference/nlm/methods.json [--natstudy target/release/natstudy] \\
      [--threads 2] [--rounds 3] [--work /tmp/gguf-bench]

`--methods` takes a JSON list of methods, or the Defects4J fixture's `expected.json` (its
single-method bugs' sources). Needs torch, transformers, gguf and accelerate (`pip install torch
transformers gguf accelerate`); the f32 copy is made once under `--work`."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def methods_of(path, work):
    data = json.load(open(path))
    if isinstance(data, dict):  # the Defects4J fixture's expected.json
        data = [v["source"] for _, v in sorted(data.items()) if isinstance(v, dict) and "source" in v]
    out = os.path.join(work, "methods-" + os.path.basename(os.path.dirname(os.path.abspath(path))) + ".json")
    json.dump(data, open(out, "w"))
    return out, len(data)


def f32_copy(gguf, work, python):
    folder = os.path.join(work, "f32-" + os.path.splitext(os.path.basename(gguf))[0])
    if not os.path.exists(os.path.join(folder, "config.json")):
        # transformers will not save a model read from GGUF: its dequantized tensors and
        # configuration are written as a plain f32 checkpoint
        code = (
            "import os, sys, torch\n"
            "from safetensors.torch import save_file\n"
            "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "d, f, out = sys.argv[1:4]\n"
            "os.makedirs(out, exist_ok=True)\n"
            "AutoTokenizer.from_pretrained(d, gguf_file=f).save_pretrained(out)\n"
            "m = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)\n"
            "state = {k: v.contiguous() for k, v in m.state_dict().items()}\n"
            "if m.config.tie_word_embeddings:\n"
            "    state.pop('lm_head.weight', None)\n"
            "save_file(state, os.path.join(out, 'model.safetensors'), metadata={'format': 'pt'})\n"
            "c = m.config.to_dict()\n"
            "c.pop('quantization_config', None)\n"
            "c['torch_dtype'] = 'float32'\n"
            "import json; json.dump(c, open(os.path.join(out, 'config.json'), 'w'), indent=1)\n"
        )
        subprocess.run([python, "-c", code, os.path.dirname(os.path.abspath(gguf)),
                        os.path.basename(gguf), folder], check=True)
    return folder


def run(cmd):
    """Runs a command: its output, and its peak resident memory in MiB."""
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed after {time.time() - start:.0f} s:\n{out}")
    return out, usage.ru_maxrss // 1024


def rate(out):
    found = re.findall(r"round \d+: .*?= (\d+) tokens/s", out)
    if not found:
        sys.exit(f"no tokens/s in:\n{out}")
    return int(found[-1])


def worst(a, b, key):
    # a method of fewer than two tokens has no score (null in natstudy's file)
    a, b = json.load(open(a)), json.load(open(b))
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y["tokens"] >= 2]
    assert len(a) == len(b) and all(x["tokens"] == y["tokens"] for x, y in pairs), "token counts differ"
    return max(abs(x["ce_nats"] - y[key]) / abs(y[key]) for x, y in pairs)


def span(xs):
    return f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)}–{max(xs)}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gguf", required=True)
    p.add_argument("--methods", required=True)
    p.add_argument("--natstudy", default="target/release/natstudy")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", default="/tmp/gguf-bench")
    p.add_argument("--before", help="an earlier natstudy binary: a row for it, the file packed "
                   "(its scores are not compared: a binary before #72 has no --out)")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    methods, n = methods_of(a.methods, a.work)
    folder = f32_copy(a.gguf, a.work, a.python)
    t = str(a.threads)
    ns = [a.natstudy, "bench", "lm-neural", "--methods", methods, "--threads", t, "--rounds", "2"]
    hf = [a.python, os.path.join(HERE, "transformers_score.py")]
    tools = {}
    if a.before:
        tools[f"natstudy before ({os.path.basename(a.before)}), the GGUF file packed"] = (
            [a.before] + ns[1:] + ["--model", a.gguf, "--gguf", "packed"])
    tools |= {
        "natstudy, the GGUF file packed": ns + ["--model", a.gguf, "--gguf", "packed"],
        "natstudy, its f32 safetensors copy": ns + ["--model", folder],
        "transformers, the GGUF file dequantized to f32, one method at a time":
            hf + [a.gguf, methods, "{out}", "--threads", t, "--rounds", "2"],
        "the same, 8 methods padded per batch":
            hf + [a.gguf, methods, "{out}", "--threads", t, "--rounds", "2", "--batch", "8"],
    }
    rates = {k: [] for k in tools}
    peaks = {k: [] for k in tools}
    # an earlier binary's scores are not written (it has no --out)
    outs = {k: None if tools[k][0] == a.before else os.path.join(a.work, f"ce-{i}.json")
            for i, k in enumerate(tools)}
    notes = {}
    for r in range(a.rounds):
        for name, cmd in tools.items():
            cmd = [c.replace("{out}", outs[name] or "") for c in cmd]
            if cmd[0] == a.natstudy:
                cmd += ["--out", outs[name]]
            out, peak = run(cmd)
            rates[name].append(rate(out))
            peaks[name].append(peak)
            if "batches of" in out:
                notes[name] = re.search(r"batches of \d+, \d+ at once", out).group(0)
            print(f"round {r + 1}: {name}: {rates[name][-1]} tokens/s, {peak} MiB", flush=True)
    reference = outs["transformers, the GGUF file dequantized to f32, one method at a time"]
    print(f"\n{n} methods of {a.methods}; {os.path.basename(a.gguf)}; {a.threads} threads; "
          f"{a.rounds} rounds, interleaved\n")
    print("| tool | tokens/s | peak memory (MiB) | worst CE difference from transformers' "
          "(its loss in f32) | the same, its logits' cross-entropy in f64 |")
    print("|---|---|---|---|---|")
    for name in tools:
        label = name + (f" ({notes[name]})" if name in notes else "")
        diffs = ["—", "—"] if outs[name] is None else [
            f"{worst(outs[name], reference, key):.1e}" for key in ("ce_nats", "ce_nats_f64")]
        if outs[name] == reference:
            diffs[0] = "—"
        print(f"| {label} | {span(rates[name])} | {span(peaks[name])} | {' | '.join(diffs)} |")


if __name__ == "__main__":
    main()
