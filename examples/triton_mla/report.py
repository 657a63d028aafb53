#!/usr/bin/env python3
"""report.py RESULTS_DIR: the tables of examples/triton_mla/README.md from a drive_h200.sh run
(summary.json: the timing run; check_summary.json: the correctness sweep)."""

import json
import os
import sys


def main(results):
    with open(os.path.join(results, "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    variants = [v["variant"] for v in s["variants"]]
    points = []
    for c in s["cells"]:
        if c["point"] not in points:
            points.append(c["point"])
    cell = {(c["variant"], c["point"]): c for c in s["cells"]}
    h = s["header"]
    d = h["device"]
    print("Device: %s (%s), %d SMs, L2 %.0f MiB, default SM clock %.0f MHz; driver %s; %s." % (
        d["name"], d.get("uuid", "?"), d["multiprocessors"], d.get("l2_bytes", 0) / 2**20, d.get("sm_clock_mhz", 0),
        d.get("driver_version", "?"), ", ".join("%s %s" % kv for kv in sorted(h["software"].items()))))
    print("Build id %s; seed %s; %d trials a variant x point; protocol lines valid: %s; bench exit %s; %.1f s.\n" % (
        h["build"]["id"], h["seed"], max(c["trials"] for c in s["cells"]), not s["violations"], s["exit_code"],
        s["wall_s"]))

    print("tokens/s (median of the trials, min..max in the table below); **best** per point:\n")
    print("| point | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for p in points:
        vals = {v: cell[(v, p)]["metrics"].get("tokens_per_s", {}).get("median") for v in variants if (v, p) in cell}
        best = max((x for x in vals.values() if x), default=None)
        row = []
        for v in variants:
            x = vals.get(v)
            text = "%.0f k" % (x / 1e3) if x else (cell.get((v, p), {}).get("check") or "-")
            row.append("**%s**" % text if x and x == best else text)
        print("| %s | %s |" % (p, " | ".join(row)))

    print("\nPer point, the best variant: time per step, spread, split, clock:\n")
    print("| point | best variant | tokens/s (min..max) | us / step | nsplit (CTAs) | GB/s moved | SM MHz (median) | throttled |")
    print("|---|---|---|---|---|---|---|---|")
    for p in points:
        cs = [cell[(v, p)] for v in variants if (v, p) in cell and cell[(v, p)]["metrics"]]
        c = max(cs, key=lambda c: c["metrics"]["tokens_per_s"]["median"])
        m = c["metrics"]["tokens_per_s"]
        t = c["metrics"]["time_us"]["median"]
        launch = c["detail"]["launch"]
        axes = c["axes"]
        b, hh, k = axes["batch"], axes["heads"], axes["topk"]
        moved = b * k * 1152 + b * hh * 1152 + b * hh * 1024 + b * hh * 4 + b * k * 4
        print("| %s | %s | %.0f k (%.0f..%.0f k) | %.2f | %d (%d) | %.0f | %.0f | %d of %d |" % (
            p, c["variant"], m["median"] / 1e3, m["min"] / 1e3, m["max"] / 1e3, t, launch["nsplit"], launch["ctas"],
            moved / (t * 1e-6) / 1e9, c["clock_mhz"]["median"] if c["clock_mhz"] else 0, c["throttled"], c["trials"]))

    print("\nThe compiled split kernel of each variant (Triton's CompiledKernel) and how it was timed:\n")
    print("| variant | registers / thread | spills | shared memory (bytes) | timing at C96 |")
    print("|---|---|---|---|---|")
    for v in variants:
        c = cell.get((v, points[-1])) or next(cell[(v, p)] for p in points if (v, p) in cell)
        launch = c.get("detail", {}).get("launch", {})
        print("| %s | %s | %s | %s | %s |" % (v, launch.get("registers_per_thread", "?"), launch.get("spills", "?"),
                                          launch.get("shared_bytes", "?"), c.get("detail", {}).get("timing", "?")))

    worst_o = max(c["errors"]["rel_l2_o"] for c in s["cells"] if "errors" in c)
    worst_lse = max(c["errors"]["max_abs_lse"] for c in s["cells"] if "errors" in c)
    statuses = {}
    for c in s["cells"]:
        statuses[c["check"]] = statuses.get(c["check"], 0) + 1
    print("\nCorrectness (timing run): %s; worst rel_l2_o %.2e, worst max_abs_lse %.2e." % (
        ", ".join("%d %s" % (n, k) for k, n in sorted(statuses.items())), worst_o, worst_lse))
    check_path = os.path.join(results, "check_summary.json")
    if os.path.exists(check_path):
        with open(check_path, encoding="utf-8") as f:
            cs = json.load(f)
        statuses = {}
        for c in cs["cells"]:
            statuses[c["check"]] = statuses.get(c["check"], 0) + 1
        ok = [c for c in cs["cells"] if "errors" in c]
        print("Correctness sweep (%d variants x %d points): %s; worst rel_l2_o %.2e, worst max_abs_lse %.2e; "
              "protocol lines valid: %s." % (
                  len(cs["variants"]), len({c["point"] for c in cs["cells"]}),
                  ", ".join("%d %s" % (n, k) for k, n in sorted(statuses.items())),
                  max(c["errors"]["rel_l2_o"] for c in ok), max(c["errors"]["max_abs_lse"] for c in ok),
                  not cs["violations"]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
