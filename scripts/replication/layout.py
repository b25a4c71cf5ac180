#!/usr/bin/env python3
"""Lays natstudy's exports of a study out as the published replication package's `data/`
folder, so that its rq1.py, rq2_1.py, rq2_2.py and rq3.py read them.

natstudy's own files go in as they are: `survey.json` (natstudy export --what survey) is the
package's data/human_study/survey/survey.json byte for byte. The rest is the package's private
layout of the same facts, built from natstudy's interchange exports (bugs.jsonl,
transformations.jsonl, npr_results.csv, ce_scores.csv):

- data/meta/original.json: the bugs, `id` their position, `line_numbers` their buggy lines;
  data/meta/{level}.json: the transformations, `id` their number, `ori_id` their bug's position;
- data/plausible_patches/{original,level}-{tool}.xlsx: one row per plausible or correct target
  (`Annotation` yes for correct, no for plausible); a target without a row is wrong, as the
  package reads it. natstudy's exports carry no patch text: `generated_diff` says so;
- data/entropy/{model}_{level}_default.txt and id2idx/{level}/{tokenizer}.id2idx: each
  target's cross-entropy, under the package's numbering (tokenizer `antlr` for `ngram`).

Usage: layout.py EXPORTS_DIR PACKAGE_DIR
"""
import csv
import json
import os
import sys

import pandas as pd

LEVELS = ["naming", "expression", "statement"]
STATUS = {"wrong": 0, "plausible": 1, "correct": 2}


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(exports, package):
    data = os.path.join(package, "data")
    for d in ["human_study/survey", "meta", "plausible_patches", "entropy/id2idx", "ids",
              "score", "figures", "changes"]:
        os.makedirs(os.path.join(data, d), exist_ok=True)
    with open(os.path.join(exports, "survey.json"), "rb") as f:
        survey = f.read()
    with open(os.path.join(data, "human_study/survey/survey.json"), "wb") as f:
        f.write(survey)

    bugs = jsonl(os.path.join(exports, "bugs.jsonl"))
    items = jsonl(os.path.join(exports, "transformations.jsonl"))
    position = {b["bug_id"]: i for i, b in enumerate(bugs)}
    original = [{"id": i, "bug_id": b["bug_id"], "line_numbers": b.get("buggy_lines", [])}
                for i, b in enumerate(bugs)]
    # a target's (file kind, package id, bug)
    target = {b["bug_id"]: ("original", i, b["bug_id"]) for i, b in enumerate(bugs)}
    meta = {level: [] for level in LEVELS}
    for it in items:
        number = int(it["id"].rsplit("_", 1)[1])
        meta[it["level"]].append({"id": number, "bug_id": it["bug_id"],
                                  "ori_id": position[it["bug_id"]]})
        target[it["id"]] = (it["level"], number, it["bug_id"])
    with open(os.path.join(data, "meta/original.json"), "w") as f:
        json.dump(original, f)
    for level in LEVELS:
        with open(os.path.join(data, f"meta/{level}.json"), "w") as f:
            json.dump(meta[level], f)

    rows = {}
    tools = []
    with open(os.path.join(exports, "npr_results.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["tool"] not in tools:
                tools.append(r["tool"])
            kind, pid, bug = target[r["target"]]
            if STATUS[r["status"]] >= 1:
                rows.setdefault((kind, r["tool"]), []).append({
                    "bug_id": bug, "id": pid,
                    "generated_diff": "(natstudy exports no patch text)",
                    "developer_diff": "",
                    "Annotation": "yes" if r["status"] == "correct" else "no"})
    for tool in tools:
        for kind in ["original"] + LEVELS:
            df = pd.DataFrame(rows.get((kind, tool), []),
                              columns=["bug_id", "id", "generated_diff", "developer_diff",
                                       "Annotation"])
            df.to_excel(os.path.join(data, f"plausible_patches/{kind}-{tool}.xlsx"),
                        index=False)

    scores = {}
    with open(os.path.join(exports, "ce_scores.csv"), newline="") as f:
        for r in csv.DictReader(f):
            kind, pid, _ = target[r["target"]]
            scores.setdefault(r["model"], {}).setdefault(kind, []).append(
                (pid, r["cross_entropy"]))
    for model, kinds in scores.items():
        tokenizer = "antlr" if model == "ngram" else model
        for kind in ["original"] + LEVELS:
            os.makedirs(os.path.join(data, f"entropy/id2idx/{kind}"), exist_ok=True)
            entries = kinds.get(kind, [])
            with open(os.path.join(data, f"entropy/{model}_{kind}_default.txt"), "w") as f:
                for j, (_, ce) in enumerate(entries):
                    f.write(f"{j}\t{ce}\n")
            with open(os.path.join(data, f"entropy/id2idx/{kind}/{tokenizer}.id2idx"), "w") as f:
                for j, (pid, _) in enumerate(entries):
                    f.write(f"{pid}\t{j + 1}\n")
    print(json.dumps({"tools": tools, "models": list(scores)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
