#!/usr/bin/env python3
"""Correctness and timing sweeps of the CUDA sparse MLA decode kernels, driven
through mla_bench's protocol, plus PyTorch eager and a copy-bandwidth probe
measured in the same run. Prints the BENCHMARKS.md tables last.

usage: h200_bench.py --bench BUILD/mla_bench --out DIR [--phases check,time,torch]
                     [--dtypes bf16,fp8] [--target-ctas 0,96,132,...] [--trials N]
                     [--bench-old OLD/mla_bench]

Phases:
  check  every variant (18 compiled x target_ctas 0, 1 and 2^20: the device
         default, nsplit = 1 and nsplit = tiles) at odd shapes and the users'
         points, each against the float64 reference (mla_bench's check line),
         for each of --dtypes (fp8 points carry an _fp8 suffix);
  time   the users' points (H 16, topk 2048, B 1..96; H 128, B 128) for every
         variant x target_ctas (default 0, 96, 132, 240, 264, 384, 528, 1056; a value
         that repeats a split factor is skipped), several trials each, each dtype;
  exp    experiments: --bench and each --bench-exp build time --exp-pairs in
         alternating processes, two rounds (exp.jsonl, exp.md);
  ab     before/after: --bench-old and --bench, each variant at the users' bf16
         points at the target_ctas BENCHMARKS.md's "Variant x B" table found best,
         in four processes (old, new, old, new): the per-variant change against the
         process-to-process spread of each build (ab.jsonl.gz, ab.md);
  torch  PyTorch eager (gather + einsum + softmax, bf16) at the same points,
         CUDA events, rotating input sets; and a device-to-device copy;
  profile  Nsight Compute sections of one split launch of a few cases (off by
         default), appended to DIR/analysis.txt.
Raw protocol lines go to DIR/check.jsonl and DIR/time.jsonl; the summary to
DIR/summary.json and DIR/table.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

COPY_BW_NOMINAL = 4.28e12  # bytes/s, the measured H200 copy bandwidth the targets refer to
FLASHMLA_TFLOPS = 410.0

BLOCK_TS = (16, 32, 64)
WARPS = (4, 8)
STAGES = (1, 2, 3)

USER_POINTS = [("b%d_h16_k2048" % b, b, 16, 2048) for b in (1, 8, 48, 64, 80, 96)] + [("b128_h128_k2048", 128, 128, 2048)]
ODD_POINTS = [
    ("b3_h8_k1000", 3, 8, 1000),      # heads padded to the MMA's 16 rows; partial last tile
    ("b3_h128_k2047", 3, 128, 2047),  # 4 head groups; topk one short of 2048
    ("b96_h16_k64", 96, 16, 64),      # a single tile of 64
    ("b1_h16_k1000", 1, 16, 1000),
    ("b5_h40_k777", 5, 40, 777),      # a head group of 32 and one of 8
    ("b4_h24_k100", 4, 24, 100),      # 24 heads in a 32-row tile
    ("b4_h1_k300", 4, 1, 300),        # one head
]


def variant_name(bt, w, s, tc):
    return "bt%d_w%d_s%d_tc%d" % (bt, w, s, tc)


def variants(target_ctas_list):
    out = []
    for tc in target_ctas_list:
        for bt in BLOCK_TS:
            for w in WARPS:
                for s in STAGES:
                    out.append({"name": variant_name(bt, w, s, tc),
                                "params": {"block_t": bt, "num_warps": w, "num_stages": s, "target_ctas": tc}})
    return out


def points(spec, dtype="bf16"):
    suffix = "" if dtype == "bf16" else "_" + dtype
    return [{"id": pid + suffix, "batch": b, "heads": h, "topk": k, "dtype": dtype} for pid, b, h, k in spec]


def all_points(spec, dtypes):
    return [p for d in dtypes for p in points(spec, d)]


def row_bytes(dtype):
    return 656 if dtype == "fp8" else 1152


def step_bytes(b, h, k, dtype="bf16"):
    """mla::bytes_per_step: gathered rows, q, o, lse, indices."""
    return b * k * row_bytes(dtype) + b * h * 1152 + b * h * 1024 + b * h * 4 + b * k * 4


def run_bench(bench, plan, requests, raw_path, log_path):
    """Feeds the plan and requests, returns the parsed stdout lines."""
    text = json.dumps(plan) + "\n" + "".join(json.dumps(r) + "\n" for r in requests)
    t0 = time.time()
    with open(log_path, "a") as log:
        proc = subprocess.run([bench], input=text, stdout=subprocess.PIPE, stderr=log, text=True)
    lines = []
    with open(raw_path, "w") as raw:
        for line in proc.stdout.splitlines():
            raw.write(line + "\n")
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                print("PROTOCOL ERROR: not JSON: %r" % line[:200])
    print("mla_bench exited %d after %.1f s, %d lines -> %s" % (proc.returncode, time.time() - t0, len(lines), raw_path),
          flush=True)
    for l in lines:
        if l.get("kind") == "error":
            print("BENCH ERROR:", l)
    return lines


def phase_check(args):
    plan = {"kind": "plan", "schema_version": 1, "backend": "cuda",
            "variants": variants((0, 1, 1 << 20)), "points": all_points(ODD_POINTS + USER_POINTS, args.dtypes),
            "check": {"masked_fraction": 0.1},
            "timing": {"min_trial_ms": 0.5, "warmup_ms": 0}}
    if args.seed:
        plan["seed"] = args.seed
    reqs = [{"kind": "measure", "variant": v["name"], "point": p["id"], "trials": 1}
            for p in plan["points"] for v in plan["variants"]]
    lines = run_bench(args.bench, plan, reqs, os.path.join(args.out, "check.jsonl"), os.path.join(args.out, "bench.log"))
    header = next((l for l in lines if l.get("kind") == "header"), {})
    checks = [l for l in lines if l.get("kind") == "check"]
    by_status = {}
    for c in checks:
        by_status.setdefault(c["status"], []).append(c)
    worst = max((c.get("rel_l2_o") or 0.0 for c in checks if c["status"] == "ok"), default=0.0)
    worst_lse = max((c.get("max_abs_lse") or 0.0 for c in checks if c["status"] == "ok"), default=0.0)
    summary = {"checks": len(checks), "expected": len(reqs),
               "ok": len(by_status.get("ok", [])), "incorrect": len(by_status.get("incorrect", [])),
               "infeasible": len(by_status.get("infeasible", [])),
               "worst_rel_l2_o": worst, "worst_max_abs_lse": worst_lse, "seed": header.get("seed")}
    for d in args.dtypes:
        mine = [c for c in checks if c["point"].endswith("_fp8") == (d == "fp8")]
        ok = [c for c in mine if c["status"] == "ok"]
        summary[d] = {"ok": len(ok), "incorrect": len([c for c in mine if c["status"] == "incorrect"]),
                      "infeasible": len([c for c in mine if c["status"] == "infeasible"]),
                      "worst_rel_l2_o": max((c.get("rel_l2_o") or 0.0 for c in ok), default=0.0),
                      "worst_max_abs_lse": max((c.get("max_abs_lse") or 0.0 for c in ok), default=0.0)}
        print("CHECK %s: %d ok, %d incorrect, %d infeasible; worst rel_l2_o %.3g, worst |dlse| %.3g" % (
            d, summary[d]["ok"], summary[d]["incorrect"], summary[d]["infeasible"], summary[d]["worst_rel_l2_o"],
            summary[d]["worst_max_abs_lse"]))
    print("CHECK: %(checks)d of %(expected)d pairs checked: %(ok)d ok, %(incorrect)d incorrect, "
          "%(infeasible)d infeasible; worst rel_l2_o %(worst_rel_l2_o).3g, worst |dlse| %(worst_max_abs_lse).3g "
          "(seed %(seed)s)" % summary)
    for c in by_status.get("incorrect", [])[:30]:
        print("  INCORRECT %s at %s: %s" % (c["variant"], c["point"], c.get("reason")))
    infeasible_reasons = sorted({(c["variant"].rsplit("_tc", 1)[0], c.get("reason", "")[:160])
                                 for c in by_status.get("infeasible", [])})
    for v, r in infeasible_reasons[:12]:
        print("  infeasible %s: %s" % (v, r))
    variant_lines = [l for l in lines if l.get("kind") == "variant" and l["variant"].endswith("_tc0")]
    return summary, header, variant_lines


def nsplit_of(params, point, sms=132):
    """mla::plan_split's split factor, to skip target_ctas that repeat one."""
    block_h = min(32, point["heads"])
    groups = -(-point["heads"] // block_h)
    tiles = -(-point["topk"] // params["block_t"])
    tc = params["target_ctas"] or 2 * sms
    return max(1, min(tiles, -(-tc // (point["batch"] * groups))))


def phase_time(args):
    tcs = [int(t) for t in args.target_ctas.split(",")]
    plan = {"kind": "plan", "schema_version": 1, "backend": "cuda",
            "variants": variants(tcs), "points": all_points(USER_POINTS, args.time_dtypes),
            "timing": {"min_trial_ms": args.min_trial_ms, "warmup_ms": args.warmup_ms}}
    if args.seed:
        plan["seed"] = args.seed
    # Point-major (one workload resident at a time); a target_ctas that gives
    # a split factor already requested for that kernel is not timed again.
    reqs = []
    for p in plan["points"]:
        seen = set()
        for v in plan["variants"]:
            prm = v["params"]
            # (bt64 with 3 stages does not fit 227 KB in bf16: its requests get
            # an infeasible check and a skipped line, at no device time.)
            key = (prm["block_t"], prm["num_warps"], prm["num_stages"], nsplit_of(prm, p))
            if key in seen:
                continue
            seen.add(key)
            reqs.append({"kind": "measure", "variant": v["name"], "point": p["id"], "trials": args.trials})
    print("TIME: %d requests" % len(reqs), flush=True)
    lines = run_bench(args.bench, plan, reqs, os.path.join(args.out, "time.jsonl"), os.path.join(args.out, "bench.log"))
    trials = {}
    for l in lines:
        if l.get("kind") == "trial":
            trials.setdefault((l["variant"], l["point"]), []).append(l)
    rows = []
    for (v, p), ts in trials.items():
        kept = [t for t in ts if not t["throttled"]] or ts
        times = sorted(t["time_us"] for t in kept)
        med = statistics.median(times)
        bytes_per_step = kept[0]["bytes_per_s"] * kept[0]["time_us"] * 1e-6
        flops_per_step = kept[0]["flops_per_s"] * kept[0]["time_us"] * 1e-6
        clocks = [t["sm_clock_mhz"] for t in kept if t.get("sm_clock_mhz")]
        rows.append({"variant": v, "point": p, "median_us": med, "min_us": times[0], "max_us": times[-1],
                     "trials": len(ts), "throttled": len(ts) - len([t for t in ts if not t["throttled"]]),
                     "steps": kept[0]["steps"], "bytes_per_step": bytes_per_step, "flops_per_step": flops_per_step,
                     "gb_per_s": bytes_per_step / med * 1e-3, "tflops": flops_per_step / med * 1e-6,
                     "roofline_pct": 100.0 * (bytes_per_step / COPY_BW_NOMINAL * 1e6) / med,
                     "sm_clock_mhz": statistics.median(clocks) if clocks else None})
    skipped = [l for l in lines if l.get("kind") == "skipped"]
    print("TIME: %d timed pairs, %d skipped" % (len(rows), len(skipped)))
    return rows


def best_tc_from_benchmarks(path):
    """BENCHMARKS.md's "Variant x B" table: variant -> [target_ctas per USER_POINTS column]."""
    best = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 1 + len(USER_POINTS) and cells[0].startswith("bt") and "/" in cells[1]:
                best[cells[0]] = [int(c.split("/")[1].rstrip("*")) for c in cells[1:]]
    return best


def phase_ab(args):
    """The same variants at the same points and target_ctas, timed by the old
    and the new build in alternating processes: old, new, old, new."""
    best = best_tc_from_benchmarks(args.benchmarks_md)
    names, var = {}, []
    for v, tcs in sorted(best.items()):
        bt, w, st = (int(x[2:] if x.startswith("bt") else x[1:]) for x in v.split("_"))
        for tc in set(tcs):
            name = variant_name(bt, w, st, tc)
            if name not in names:
                names[name] = True
                var.append({"name": name, "params": {"block_t": bt, "num_warps": w, "num_stages": st, "target_ctas": tc}})
    plan = {"kind": "plan", "schema_version": 1, "backend": "cuda", "variants": var, "points": points(USER_POINTS),
            "timing": {"min_trial_ms": args.min_trial_ms, "warmup_ms": args.warmup_ms}, "seed": args.seed or 3598166362493843}
    reqs = []
    for i, p in enumerate(plan["points"]):
        for v, tcs in sorted(best.items()):
            reqs.append({"kind": "measure", "variant": v + "_tc%d" % tcs[i], "point": p["id"], "trials": args.trials})
    print("AB: %d pairs, %d variants, 4 processes" % (len(reqs), len(var)), flush=True)
    med = {}  # (build, rep) -> {(variant, point): median}
    raw = os.path.join(args.out, "ab.jsonl")
    with open(raw, "w") as out:
        for rep in range(2):
            for build, bench in (("old", args.bench_old), ("new", args.bench)):
                lines = run_bench(bench, plan, reqs, raw + ".part", os.path.join(args.out, "bench.log"))
                for l in lines:
                    out.write(json.dumps(dict(l, ab_build=build, ab_rep=rep)) + "\n")
                trials = {}
                for l in lines:
                    if l.get("kind") == "trial":
                        trials.setdefault((l["variant"], l["point"]), []).append(l["time_us"])
                    if l.get("kind") == "check" and l["status"] != "ok":
                        print("AB %s: %s at %s: %s %s" % (build, l["variant"], l["point"], l["status"], l.get("reason")))
                med[(build, rep)] = {k: statistics.median(v) for k, v in trials.items()}
    os.remove(raw + ".part")
    rows = []
    for key in sorted(med[("new", 0)]):
        o = [med[("old", r)].get(key) for r in range(2)]
        n = [med[("new", r)].get(key) for r in range(2)]
        if None in o or None in n:
            continue
        old_us, new_us = statistics.mean(o), statistics.mean(n)
        rows.append({"variant": key[0], "point": key[1], "old_us": old_us, "new_us": new_us,
                     "delta_pct": 100.0 * (new_us / old_us - 1), "old_runs": o, "new_runs": n,
                     "old_spread_pct": 100.0 * abs(o[1] - o[0]) / old_us,
                     "new_spread_pct": 100.0 * abs(n[1] - n[0]) / new_us})
    # Noise: the A/A difference of each build between its two processes.
    spread = sorted(r["old_spread_pct"] for r in rows) + sorted(r["new_spread_pct"] for r in rows)
    deltas = sorted(r["delta_pct"] for r in rows)
    lines = ["Before/after (old = %s, new = %s): %d variant x point pairs, each the mean of two process medians of %d trials"
             % (args.bench_old, args.bench, len(rows), args.trials),
             "delta new/old: median %+.2f%%, min %+.2f%%, max %+.2f%%; A/A spread of one build between its two processes: "
             "median %.2f%%, 90th percentile %.2f%%, max %.2f%%" % (
                 statistics.median(deltas), deltas[0], deltas[-1], statistics.median(spread),
                 spread[int(0.9 * (len(spread) - 1))], spread[-1]),
             "", "| variant | point | old us (2 runs) | new us (2 runs) | delta |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %.2f (%.2f, %.2f) | %.2f (%.2f, %.2f) | %+.2f%% |" % (
            r["variant"], r["point"], r["old_us"], r["old_runs"][0], r["old_runs"][1], r["new_us"], r["new_runs"][0],
            r["new_runs"][1], r["delta_pct"]))
    text = "\n".join(lines)
    with open(os.path.join(args.out, "ab.md"), "w") as f:
        f.write(text + "\n")
    print("\n".join(lines[:2]))
    return rows


def phase_exp(args):
    """Experiments: the default build and each --bench-exp build (the same
    source with one knob changed) time the --exp-pairs in alternating
    processes, two rounds: the change per pair against the spread of each build."""
    builds = [("default", args.bench)] + [tuple(x.split("=", 1)) for x in args.bench_exp.split(",") if x]
    pairs = [x.split("@") for x in args.exp_pairs.split(",") if x]  # "bt16_w4_s2_tc480@b96_h16_k2048_fp8"
    var, seen = [], set()
    for v, _ in pairs:
        if v in seen:
            continue
        seen.add(v)
        base, tc = v.rsplit("_tc", 1)
        bt, w, st = (int(x[2:] if x.startswith("bt") else x[1:]) for x in base.split("_"))
        var.append({"name": v, "params": {"block_t": bt, "num_warps": w, "num_stages": st, "target_ctas": int(tc)}})
    users = {pid: (pid, b, h, k) for pid, b, h, k in USER_POINTS}
    pts, pids = [], set()
    for _, p in pairs:
        if p in pids:
            continue
        pids.add(p)
        dtype = "fp8" if p.endswith("_fp8") else "bf16"
        pts += points([users[p[:-4] if dtype == "fp8" else p]], dtype)
    plan = {"kind": "plan", "schema_version": 1, "backend": "cuda", "variants": var, "points": pts,
            "timing": {"min_trial_ms": args.min_trial_ms, "warmup_ms": args.warmup_ms}, "seed": args.seed or 3598166362493843}
    order = {p["id"]: i for i, p in enumerate(pts)}
    reqs = [{"kind": "measure", "variant": v, "point": p, "trials": args.trials}
            for v, p in sorted(pairs, key=lambda vp: order[vp[1]])]
    print("EXP: %d pairs x builds %s x 2 rounds" % (len(reqs), [b for b, _ in builds]), flush=True)
    med = {}
    with open(os.path.join(args.out, "exp.jsonl"), "w") as out:
        for rep in range(2):
            for build, bench in builds:
                lines = run_bench(bench, plan, reqs, os.path.join(args.out, "exp.part"), os.path.join(args.out, "bench.log"))
                for l in lines:
                    out.write(json.dumps(dict(l, exp_build=build, exp_rep=rep)) + "\n")
                    if l.get("kind") == "check" and l["status"] != "ok":
                        print("EXP %s: %s at %s: %s %s" % (build, l["variant"], l["point"], l["status"], l.get("reason")))
                trials = {}
                for l in lines:
                    if l.get("kind") == "trial":
                        trials.setdefault((l["variant"], l["point"]), []).append(l["time_us"])
                med[(build, rep)] = {k: statistics.median(v) for k, v in trials.items()}
    os.remove(os.path.join(args.out, "exp.part"))
    lines = ["Experiments (each cell: mean of two process medians of %d trials; (run 1, run 2))" % args.trials, "",
             "| variant | point | " + " | ".join(b for b, _ in builds) + " |", "|---|---|" + "---|" * len(builds)]
    rows = []
    for v, p in pairs:
        cells, base = [], None
        row = {"variant": v, "point": p}
        for build, _ in builds:
            runs = [med[(build, r)].get((v, p)) for r in range(2)]
            if None in runs:
                cells.append("-")
                continue
            m = statistics.mean(runs)
            row[build] = runs
            if base is None:
                base = m
                cells.append("%.2f (%.2f, %.2f)" % (m, runs[0], runs[1]))
            else:
                cells.append("%.2f (%.2f, %.2f) %+.1f%%" % (m, runs[0], runs[1], 100.0 * (m / base - 1)))
        rows.append(row)
        lines.append("| %s | %s | %s |" % (v, p, " | ".join(cells)))
    text = "\n".join(lines)
    with open(os.path.join(args.out, "exp.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return rows


def phase_torch(args):
    import torch
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    res = {"torch": torch.__version__, "device": props.name}

    # Copy bandwidth: bytes read + written over the time of a large device-to-device copy.
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=dev)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    bws = []
    for _ in range(10):
        s.record(); b.copy_(a); e.record(); torch.cuda.synchronize()
        bws.append(2 * n / (s.elapsed_time(e) * 1e-3))
    res["copy_bytes_per_s_median"] = statistics.median(bws)
    del a, b

    # Gather bandwidth: the users' B = 96 rows (2048 random rows of 1152 bytes
    # each) copied out with index_select, bytes read + written over time.
    rows, ctx = 96 * 2048, 8192
    pool = torch.randn(2 * 96 * ctx, 576, device=dev, dtype=torch.bfloat16)
    sel = [torch.randint(0, pool.shape[0], (rows,), device=dev) for _ in range(2)]
    for i in range(3):
        torch.index_select(pool, 0, sel[i % 2])
    gbw = []
    for i in range(10):
        s.record(); torch.index_select(pool, 0, sel[i % 2]); e.record(); torch.cuda.synchronize()
        gbw.append(2 * rows * 1152 / (s.elapsed_time(e) * 1e-3))
    res["gather_bytes_per_s_median"] = statistics.median(gbw)
    del pool, sel

    scale = 0.07216878364870322
    rows = []
    for pid, B, H, K in USER_POINTS:
        ctx = max(4 * K, 4096)
        step_bytes = B * K * 1152 + B * H * 1152 + B * H * 1024 + B * H * 4 + B * K * 4
        sets = max(2, -(-2 * l2 // step_bytes))
        g = torch.Generator(device=dev)
        g.manual_seed(1234)
        kv = torch.randn(sets * B * ctx, 576, device=dev, dtype=torch.bfloat16, generator=g)
        qs = [torch.randn(B, H, 576, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(sets)]
        idx = []
        for st in range(sets):
            base = (torch.arange(B, device=dev) + st * B) * ctx
            perm = torch.argsort(torch.rand(B, ctx, device=dev, generator=g), dim=1)[:, :K]
            idx.append((perm + base[:, None]).to(torch.int32))

        def step(st):
            ind = idx[st]
            kvg = kv[ind.long()]                                          # [B, K, 576] gather
            sc = torch.einsum("bhd,bkd->bhk", qs[st], kvg).float() * scale
            sc = sc.masked_fill((ind < 0)[:, None, :], float("-inf"))
            lse = torch.logsumexp(sc, dim=-1)
            p = torch.softmax(sc, dim=-1).to(torch.bfloat16)
            o = torch.einsum("bhk,bkd->bhd", p, kvg[..., :512])
            return o, lse

        for st in range(sets):
            step(st)
        torch.cuda.synchronize()
        steps = max(sets, 20)
        times = []
        for _ in range(args.trials):
            s.record()
            for i in range(steps):
                step(i % sets)
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) * 1e3 / steps)
        rows.append({"point": pid, "median_us": statistics.median(times), "min_us": min(times), "max_us": max(times),
                     "steps": steps, "trials": args.trials, "sets": sets})
        print("torch eager %s: %.1f us/step (sets %d)" % (pid, rows[-1]["median_us"], sets), flush=True)
        del kv, qs, idx
        torch.cuda.empty_cache()
    res["points"] = rows
    return res


PROFILE_CASES = [  # (point, block_t, num_warps, num_stages, target_ctas, dtype)
    (("b96_h16_k2048", 96, 16, 2048), 16, 4, 2, 384, "bf16"),
    (("b64_h16_k2048", 64, 16, 2048), 64, 8, 2, 96, "bf16"),
    (("b8_h16_k2048", 8, 16, 2048), 64, 4, 2, 96, "bf16"),
    (("b128_h128_k2048", 128, 128, 2048), 32, 4, 1, 0, "bf16"),
]


def profile_cases(text):
    """--profile-cases "b96_h16_k2048:16:4:2:384:fp8,...", or the default list."""
    if not text:
        return PROFILE_CASES
    users = {pid: (pid, b, h, k) for pid, b, h, k in USER_POINTS}
    out = []
    for item in text.split(","):
        pid, bt, w, st, tc, dtype = item.split(":")
        out.append((users[pid], int(bt), int(w), int(st), int(tc), dtype))
    return out
NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "SchedulerStats",
                "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis"]


def phase_profile(args):
    """Nsight Compute on one split launch of a few cases (a timing set, warm): the
    stall reasons and pipe use that say what bounds the kernel."""
    import shutil
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    path = os.path.join(args.out, "analysis.txt")
    for (pid, b, h, k), bt, w, st, tc, dtype in profile_cases(args.profile_cases):
        name = variant_name(bt, w, st, tc)
        pts = points([(pid, b, h, k)], dtype)
        pid = pts[0]["id"]
        plan = {"kind": "plan", "schema_version": 1, "backend": "cuda",
                "variants": [{"name": name, "params": {"block_t": bt, "num_warps": w, "num_stages": st, "target_ctas": tc}}],
                "points": pts, "timing": {"min_trial_ms": 1, "warmup_ms": 1}}
        text = json.dumps(plan) + "\n" + json.dumps({"kind": "measure", "variant": name, "point": pid, "trials": 1}) + "\n"
        cmd = [ncu, "--clock-control", "none", "--kernel-name", "regex:split_kv", "--launch-skip", "3",
               "--launch-count", "1"] + sum((["--section", x] for x in NCU_SECTIONS), []) + [args.bench]
        t0 = time.time()
        proc = subprocess.run(cmd, input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        report = [l for l in proc.stdout.splitlines() if not l.startswith("{")]
        with open(path, "a") as f:
            f.write("\n==== ncu %s at %s (exit %d, %.0f s)\n" % (name, pid, proc.returncode, time.time() - t0))
            f.write("\n".join(report) + "\n")
        keys = ("Duration", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput", "Achieved Occupancy",
                "Issued Warp Per Scheduler", "No Eligible", "Warp Cycles Per Issued Instruction")
        print("ncu %s at %s:" % (name, pid))
        for l in report:
            if any(x in l for x in keys):
                print("   " + " ".join(l.split()))


def table(check, header, variant_lines, rows, torch_res):
    out = []
    dev = header.get("device", {})
    if dev:
        out.append("Device: %s, %s SMs, cc %s, L2 %.0f MB, smem opt-in %s B, SM clock (default) %s MHz, "
                   "memory clock %s MHz, driver %s, runtime %s" % (
                       dev.get("name"), dev.get("multiprocessors"), dev.get("compute_capability"),
                       (dev.get("l2_bytes") or 0) / 1e6, dev.get("smem_per_block_optin_bytes"), dev.get("sm_clock_mhz"),
                       dev.get("mem_clock_mhz"), dev.get("driver_version"), dev.get("runtime_version")))
    if torch_res:
        out.append("Copy bandwidth measured in this run: %.2f TB/s (read + write); row gather (index_select of "
                   "196608 random 1152-byte rows): %.2f TB/s; the roofline below uses %.2f TB/s."
                   % (torch_res["copy_bytes_per_s_median"] / 1e12, torch_res.get("gather_bytes_per_s_median", 0) / 1e12,
                      COPY_BW_NOMINAL / 1e12))
    if check:
        out.append("Correctness: %(ok)d ok, %(incorrect)d incorrect, %(infeasible)d infeasible of %(checks)d checks; "
                   "worst rel L2 %(worst_rel_l2_o).2e, worst |dlse| %(worst_max_abs_lse).2e" % check)
    if variant_lines:
        out.append("")
        out.append("| kernel | regs | dyn smem B | spill B | blocks/SM |")
        out.append("|---|---|---|---|---|")
        for vl in variant_lines:
            for k in vl.get("kernels", []):
                if k["kernel"].startswith("combine") and vl is not variant_lines[0]:
                    continue
                out.append("| %s | %d | %d | %d | %s |" % (k["kernel"], k["registers_per_thread"], k["dynamic_smem_bytes"],
                                                      k["local_bytes_per_thread"],
                                                      k["max_blocks_per_sm"] if k["max_blocks_per_sm"] else "infeasible"))
    if not rows:
        return "\n".join(out)
    present = {r["point"] for r in rows}
    all_pts = [p for p, _, _, _ in USER_POINTS] + [p + "_fp8" for p, _, _, _ in USER_POINTS]
    pts = [p for p in all_pts if p in present]
    best = {}
    for p in pts:
        cands = [r for r in rows if r["point"] == p]
        if cands:
            best[p] = min(cands, key=lambda r: r["median_us"])
    # One row per compiled kernel variant; each cell the best target_ctas there.
    base = {}
    for r in rows:
        b, tc = r["variant"].rsplit("_tc", 1)
        cur = base.setdefault(b, {}).get(r["point"])
        if cur is None or r["median_us"] < cur["median_us"]:
            base[b][r["point"]] = r
    for dtype_pts in ([p for p in pts if not p.endswith("_fp8")], [p for p in pts if p.endswith("_fp8")]):
        if not dtype_pts:
            continue
        out.append("")
        out.append("Time per step, us, median of trials, at the best target_ctas of each kernel variant "
                   "(us/tc; * = best at that point)")
        out.append("")
        out.append("| variant | " + " | ".join(dtype_pts) + " |")
        out.append("|---|" + "---|" * len(dtype_pts))
        for b in sorted(base, key=lambda x: tuple(int(t[2:] if t.startswith("bt") else t[1:]) for t in x.split("_"))):
            cells = []
            for p in dtype_pts:
                r = base[b].get(p)
                if r is None:
                    cells.append("-")
                else:
                    cells.append("%.1f/%s%s" % (r["median_us"], r["variant"].rsplit("_tc", 1)[1],
                                                "*" if best.get(p) is r else ""))
            out.append("| %s | %s |" % (b, " | ".join(cells)))
    tmap = {r["point"]: r for r in (torch_res or {}).get("points", [])}
    out.append("")
    out.append("Best variant per point against the roofline (bytes at %.2f TB/s) and PyTorch eager" % (COPY_BW_NOMINAL / 1e12))
    out.append("")
    out.append("| point | best variant | us (min..max) | GB/s | % roofline | floor us | TFLOP/s | SM MHz | torch eager us | speedup |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for p in pts:
        r = best.get(p)
        if r is None:
            continue
        t = tmap.get(p)
        floor = r["bytes_per_step"] / COPY_BW_NOMINAL * 1e6
        out.append("| %s | %s | %.1f (%.1f..%.1f) | %.0f | %.0f%% | %.1f | %.1f | %s | %s | %s |" % (
            p, r["variant"], r["median_us"], r["min_us"], r["max_us"], r["gb_per_s"], r["roofline_pct"], floor,
            r["tflops"], "%.0f" % r["sm_clock_mhz"] if r["sm_clock_mhz"] else "-",
            "%.1f" % t["median_us"] if t else "-", "%.1fx" % (t["median_us"] / r["median_us"]) if t else "-"))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--phases", default="check,time,torch")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--min-trial-ms", type=float, default=10.0)
    ap.add_argument("--warmup-ms", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-ctas", default="0,96,132,240,264,384,528,1056",
                    help="timing: target_ctas values, each with every compiled variant")
    ap.add_argument("--dtypes", default="bf16", help="check and time: KV cache dtypes (bf16, fp8)")
    ap.add_argument("--time-dtypes", default="", help="time: KV cache dtypes (default: --dtypes)")
    ap.add_argument("--bench-old", help="ab: the build to compare against")
    ap.add_argument("--bench-exp", default="", help="exp: name=path/to/mla_bench,... built with an experiment's knobs")
    ap.add_argument("--exp-pairs", default="", help="exp: variant_tcN@point,... (fp8 points end in _fp8)")
    ap.add_argument("--profile-cases", default="", help="profile: point:block_t:num_warps:num_stages:target_ctas:dtype,...")
    ap.add_argument("--benchmarks-md", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS.md"),
                    help="ab: where the best target_ctas per variant and point are read from")
    args = ap.parse_args()
    args.dtypes = args.dtypes.split(",")
    args.time_dtypes = args.time_dtypes.split(",") if args.time_dtypes else args.dtypes
    os.makedirs(args.out, exist_ok=True)
    phases = args.phases.split(",")
    check = header = variant_lines = None
    rows, torch_res = [], None
    ab_rows = None
    if "check" in phases:
        check, header, variant_lines = phase_check(args)
    if "ab" in phases:
        ab_rows = phase_ab(args)
    exp_rows = None
    if "exp" in phases and args.bench_exp:
        exp_rows = phase_exp(args)
    if "time" in phases:
        rows = phase_time(args)
    if "profile" in phases:
        try:
            phase_profile(args)
        except Exception as e:
            print("profile phase failed: %r" % (e,))
    if "torch" in phases:
        try:
            torch_res = phase_torch(args)
        except Exception as e:  # the kernels' numbers stand without the comparison
            print("torch phase failed: %r" % (e,))
    summary = {"check": check, "header": header, "time": rows, "torch": torch_res, "ab": ab_rows, "exp": exp_rows}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    text = table(check, header or {}, variant_lines or [], rows, torch_res)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(text + "\n")
    print()
    print(text)
    return 0 if not check or check["incorrect"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
