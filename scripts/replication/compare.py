#!/usr/bin/env python3
"""Reads the figures the package's scripts printed and compares each with natstudy's
report.json: counts exactly, every other figure to 1e-9 relative (figures the scripts print
rounded are compared after the same rounding). Prints one line per figure and a summary;
exits 1 when any figure differs.

Usage: compare.py REPORT_JSON RQ1_OUT RQ2_1_OUT RQ2_2_OUT RQ3_OUT
"""
import json
import math
import re
import sys

NUM = r"(-?[0-9.]+(?:e-?[0-9]+)?|nan)"
LEVELS = ["naming", "expression", "statement"]


class Check:
    def __init__(self):
        self.rows = []

    def add(self, name, printed, ours, rounded=None, exact=False):
        printed = float(printed)
        if ours is None:
            self.rows.append((name, printed, None, False, "natstudy has no figure"))
            return
        ours = float(ours)
        if rounded is not None:
            ours = round(ours, rounded)
        if exact:
            ok = printed == ours
            note = ""
        else:
            scale = max(abs(printed), abs(ours))
            rel = 0.0 if scale == 0 else abs(printed - ours) / scale
            ok = rel <= 1e-9 or (math.isnan(printed) and math.isnan(ours))
            note = f"rel {rel:.1e}"
        self.rows.append((name, printed, ours, ok, note))


def grab(text, pattern, what):
    found = re.findall(pattern, text)
    if not found:
        sys.exit(f"no `{what}` in the scripts' output")
    return found


def rq1(c, text, r):
    t = r["time"]
    c.add("rq1 time p99 (2 decimals)", grab(text, r"99% Percentile: " + NUM, "p99")[0],
          t["p99_cutoff"], rounded=2)
    c.add("rq1 time mean", grab(text, r"\+ Average: " + NUM, "mean")[0], t["mean"])
    c.add("rq1 time std", grab(text, r"\+ STD: " + NUM, "std")[0], t["std"])
    for level in LEVELS:
        cap = level.capitalize()
        c.add(f"rq1 time {level} mean",
              grab(text, rf"Average {cap}-level Completion Time: " + NUM, level)[0],
              t["by_level"][level]["mean"])
        c.add(f"rq1 time {level} std",
              grab(text, rf"STD {cap}-level Completion Time: " + NUM, level)[0],
              t["by_level"][level]["std"])
    tests = grab(text, r"MWW Test: p-value: " + NUM + r", effect size: " + NUM, "MWW")
    for (p, e), key in zip(tests, ["mww_expression_vs_statement", "mww_naming_vs_statement",
                                   "mww_naming_vs_expression",
                                   "mww_agreement_vs_disagreement"]):
        c.add(f"rq1 {key} p", p, (t.get(key) or {}).get("p_value"))
        c.add(f"rq1 {key} effect size", e, (t.get(key) or {}).get("effect_size"))
    for side in ["agreement", "disagreement"]:
        c.add(f"rq1 time {side} mean", grab(text, rf"Average time for {side}: " + NUM, side)[0],
              t[side]["mean"])
        c.add(f"rq1 time {side} std", grab(text, rf"STD time for {side}: " + NUM, side)[0],
              t[side]["std"])
    n = r["counts"]
    for phrase, key in [("natural by a all", "full_natural"),
                        ("unnatural by a all", "full_unnatural"),
                        ("natural by a 4/5", "natural"), ("unnatural by a 4/5", "unnatural"),
                        ("natural by a 3/5", "likely_natural"),
                        ("unnatural by a 3/5", "likely_unnatural")]:
        got = grab(text, rf"considered as {phrase} annotators: (\d+)\(", phrase)[0]
        c.add(f"rq1 count {key}", got, n[key], exact=True)
    c.add("rq1 Fleiss' kappa (2 decimals)", grab(text, r"Fleiss's agreement: " + NUM,
                                                  "kappa")[0], r["fleiss_kappa"], rounded=2)
    for level in LEVELS:
        got = grab(text, rf"\+ {level.capitalize()}-level: \[([0-9 ]+)\]", level)[0].split()
        by = r["counts_by_level"][level]
        for value, key in zip(got, ["unnatural", "likely_unnatural", "likely_natural",
                                    "natural"]):
            c.add(f"rq1 table 3 {level} {key}", value, by[key], exact=True)


def sections(text, header):
    """The output split at each `header` match: {name: its text}."""
    parts = re.split(header, text)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def robustness(c, label, part, fig, extra):
    orig = part.split("== Performance on Original Data ==")[-1]
    pr = grab(orig, r"Plausible Rate: " + NUM + "/" + r"(\d+)", "plausible")
    c.add(f"{label} bugs", pr[0][1], fig["bugs"], exact=True)
    c.add(f"{label} original plausible", pr[0][0], fig["original_plausible"], exact=True)
    c.add(f"{label} original correct", grab(orig, r"Correct Rate: " + NUM, "correct")[0],
          fig["original_correct"], exact=True)
    trans = orig.split("== Performance on Transformed Data ==")[1]
    c.add(f"{label} transformed plausible", grab(trans, r"Plausible Rate: " + NUM, "tp")[0],
          fig["transformed_plausible"])
    c.add(f"{label} transformed correct", grab(trans, r"Correct Rate: " + NUM, "tc")[0],
          fig["transformed_correct"])
    unique = orig.split("== Unique Change Rate ==")[1]
    c.add(f"{label} bugs positive", grab(unique, r"Positve: (\d+)", "positive")[0],
          fig["bugs_positive"], exact=True)
    c.add(f"{label} bugs negative", grab(unique, r"Negative: (\d+)", "negative")[0],
          fig["bugs_negative"], exact=True)
    c.add(f"{label} bugs changed", grab(unique, r"Change Rate: (\d+)", "changed")[0],
          fig["bugs_changed"], exact=True)
    extra(label, orig)


def rq2(c, text1, text2, r):
    for tool, part in sections(text1, r"<=== Transformation: (\S+) ===>\n").items():
        levels, overall = part.split("<== Overall Results ==>")
        t = r["robustness"][tool]
        for level, text in sections(levels, r"<== Transformation: (\w+) ==>\n").items():
            fig = t["all"]["by_level"][level]
            unique = text.split("== Unique Change Rate ==")[1]
            positive = grab(unique, r"Positve: (\d+)/(\d+)", "positive")[0]
            label = f"rq2.1 {tool} {level}"
            c.add(f"{label} bugs", positive[1], fig["bugs"], exact=True)
            c.add(f"{label} bugs positive", positive[0], fig["bugs_positive"], exact=True)
            c.add(f"{label} bugs negative", grab(unique, r"Negative: (\d+)", "negative")[0],
                  fig["bugs_negative"], exact=True)
            c.add(f"{label} bugs changed", grab(unique, r"Change Rate: (\d+)", "changed")[0],
                  fig["bugs_changed"], exact=True)
            c.add(f"{label} changes", grab(text, r"Total changes: (\d+)", "changes")[0],
                  t["by_level"][level]["changes"], exact=True)
        robustness(c, f"rq2.1 {tool} all", overall, r["robustness"][tool]["all"],
                   lambda *_: None)
    for n, tool in [(m[0], m[1]) for m in
                    re.findall(r"==> There are (\d+) changes for (\S+) including", text1)]:
        t = r["robustness"][tool]
        c.add(f"rq2.1 {tool} changes", n, t["changes_all"], exact=True)
        block = text1.split(f"changes for {tool} including")[1]
        for k, cat in re.findall(r"\n(\d+) changes are (\w+) \(", block)[:4]:
            share = t["change_share_by_category"][cat]
            c.add(f"rq2.1 {tool} {cat} changes", k, round(share * t["changes_all"]),
                  exact=True)
    for tool, part in sections(text2, r"============ Transformation: (\S+) ============\n").items():
        fig = r["robustness"][tool]["natural"]

        def drops(label, orig, fig=fig):
            after = orig.split("== Performance on Transformed Data ==")[1]
            floats = re.findall(r"\n" + NUM + r"(?=\n)", after)
            c.add(f"{label} plausible drop", floats[0], fig["plausible_drop"])
            c.add(f"{label} correct drop", floats[1], fig["correct_drop"])
            c.add(f"{label} positive changes",
                  grab(orig, r"Total Positive Change: (\d+)", "tpc")[0], fig["positive_changes"],
                  exact=True)
            c.add(f"{label} negative changes",
                  grab(orig, r"Total Negative Change: (\d+)", "tnc")[0], fig["negative_changes"],
                  exact=True)

        robustness(c, f"rq2.2 {tool} natural", part, fig, drops)


def rq3(c, text, r):
    for model, m in r["rnc"].items():
        tests = re.findall(rf"MWW on model {re.escape(model)}: p-value: {NUM}, effect size: {NUM}",
                           text)
        for (p, e), key in zip(tests[:2], ["mww_natural_vs_unnatural",
                                           "mww_likely_natural_vs_likely_unnatural"]):
            c.add(f"rq3 {model} {key} p", p, (m.get(key) or {}).get("p_value"))
            c.add(f"rq3 {model} {key} effect size", e, (m.get(key) or {}).get("effect_size"))
        c.add(f"rq3 {model} Spearman",
              grab(text, rf"Spearman Correlation on model {re.escape(model)}: {NUM}", model)[0],
              m["spearman_original_vs_transformed"])
        for metric in ["rnc", "nc", "ce"]:
            c.add(f"rq3 {model} AUC ({metric.upper()})",
                  grab(text, rf"\[{metric.upper()}\] AUC of {re.escape(model)}: {NUM}", metric)[0],
                  m[f"auc_{metric}"])


def main(report, out1, out21, out22, out3):
    with open(report) as f:
        r = json.load(f)
    read = lambda p: open(p).read()  # noqa: E731
    c = Check()
    rq1(c, read(out1), r)
    rq2(c, read(out21), read(out22), r)
    rq3(c, read(out3), r)
    worst = 0.0
    for name, printed, ours, ok, note in c.rows:
        print(f"{'ok ' if ok else 'BAD'} {name}: package {printed!r}, natstudy {ours!r} {note}")
        m = re.match(r"rel (.*)", note)
        if m:
            worst = max(worst, float(m.group(1)))
    bad = sum(1 for row in c.rows if not row[3])
    print(f"\n{len(c.rows) - bad} of {len(c.rows)} figures agree "
          f"(counts exactly; the largest relative difference of the rest {worst:.1e})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(*sys.argv[1:])
