#!/usr/bin/env python3
"""Copies the package's four scripts into a scratch folder, changing only what the package's
README says is fixed to its own study: the hard-coded sizes (items per level, items per
category) and the lists of models and repair tools. Every change is printed.

Usage: patch.py PACKAGE_DIR OUT_DIR SURVEY_JSON REPORT_JSON TOOLS MODELS
(TOOLS and MODELS comma-separated)
"""
import json
import math
import re
import sys

LEVELS = ["naming", "expression", "statement"]


def sub(text, pattern, replacement, name, count=0):
    new, n = re.subn(pattern, replacement, text, count=count, flags=re.S)
    if n == 0:
        sys.exit(f"{name}: no `{pattern}` to change: is this the published package?")
    print(f"  {name}: {pattern!r} -> {replacement!r} ({n}x)")
    return new


def survey_sizes(path):
    with open(path) as f:
        survey = json.load(f, parse_constant=lambda c: math.nan)
    return [len(survey.get(level, {})) for level in LEVELS]


def main(package, out, survey, report, tools, models):
    tools, models = tools.split(","), models.split(",")
    with open(report) as f:
        counts = json.load(f)["counts"]
    n, e, s = survey_sizes(survey)
    scripts = {}
    for name in ["rq1.py", "rq2_1.py", "rq2_2.py", "rq3.py"]:
        with open(f"{package}/{name}") as f:
            scripts[name] = f.read()

    t = scripts["rq1.py"]
    t = sub(t, r"range\(906\)", f"range({n})", "rq1.py")
    t = sub(t, r"range\(906, 1061\)", f"range({n}, {n + e})", "rq1.py")
    t = sub(t, r"range\(1061, 1178\)", f"range({n + e}, {n + e + s})", "rq1.py")
    for old, new in [("906", n), ("155", e), ("117", s), ("1178", n + e + s)]:
        t = sub(t, rf"(== |/ ){old}\b", rf"\g<1>{new}", "rq1.py")
    scripts["rq1.py"] = t

    t = scripts["rq3.py"]
    entropy = ",\n".join(f'        "{m}": read_data("{m}")' for m in models)
    t = sub(t, r"entropy = \{\s*\"N-gram\"[^}]*\}", "entropy = {\n" + entropy + "\n    }", "rq3.py", 1)
    for label, key in [("Natural", "natural"), ("Unnatural", "unnatural"),
                       ("Likely Unnatural", "likely_unnatural"),
                       ("Likely Natural", "likely_natural")]:
        t = sub(t, rf'(\["{label}"\]\) == )\d+', rf"\g<1>{counts[key]}", "rq3.py")
    scripts["rq3.py"] = t

    published = ["alpharepair", "recoder", "sequencer", "selfapr", "rewardrepair"]
    if sorted(tools) != sorted(published):
        calls = ",\n".join(f'    "{x}": evaluate("{x}")' for x in tools)
        for name in ["rq2_1.py", "rq2_2.py"]:
            scripts[name] = sub(scripts[name], r"changes = \{[^}]*\}",
                                "changes = {\n" + calls + "\n}", name, 1)
        t = scripts["rq2_1.py"]
        ratios = ",\n".join(f'    "{x}": []' for x in tools)
        t = sub(t, r"naturalness_ratio =\{[^}]*\}", "naturalness_ratio ={\n" + ratios + "\n}",
                "rq2_1.py", 1)
        t = sub(t, r"categories = \['SequenceR'[^\]]*\]",
                "categories = " + repr(tools + ["Overall"]), "rq2_1.py", 1)
        t = sub(t, r"axis=0\)/5", f"axis=0)/{len(tools)}", "rq2_1.py", 1)
        scripts["rq2_1.py"] = t

    for name, text in scripts.items():
        with open(f"{out}/{name}", "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:])
