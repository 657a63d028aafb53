#!/usr/bin/env python3
"""A small pure-Python bench written with the kit, for the kit's tests: each variant's `mode`
param picks a behaviour (a good kernel, a wrong one, one that raises, one that cannot be built...).
The kernel is a real sum of squares over a list of floats."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kit"))

import perfwatch_bench as pwb  # noqa: E402

MODES = ("good", "slow", "wrong", "raises", "oom", "build_infeasible", "build_raises", "describe_infeasible",
         "chatty", "fails_on_trigger", "fails_in_rotation")


def describe(params, ctx):
    mode = params.get("mode")
    if mode not in MODES:
        raise pwb.Infeasible("unknown mode %r" % (mode,))
    if mode == "describe_infeasible":
        raise pwb.Infeasible("needs 1 TB of shared memory")
    return {"ignored_params": [k for k in params if k != "mode"], "resources": {"mode": mode}}


def inputs(axes, sets, ctx):
    n = axes["n"]
    timing = [{"set": s, "xs": [float((i * 7 + s) % 13) - 6.0 for i in range(n)]} for s in range(sets)]
    return pwb.Inputs(timing, check={"set": "check", "xs": [float((i * 5) % 11) - 5.0 for i in range(n)]})


def build(params, axes, ctx):
    mode = params["mode"]
    if mode == "build_infeasible":
        raise pwb.Infeasible("needs more than %d items" % axes["n"])
    if mode == "build_raises":
        raise RuntimeError("cannot build this variant")
    trigger = ctx.params.get("trigger_file")

    def run(x):
        if mode == "raises":
            raise ValueError("bad value in the kernel")
        if mode == "oom":
            raise MemoryError("cannot allocate the workspace")
        if mode == "fails_on_trigger" and trigger and os.path.exists(trigger):
            raise ZeroDivisionError("the trigger file exists")
        if mode == "fails_in_rotation" and x["set"] == 1:
            raise KeyError("input set 1")
        if mode == "chatty":
            print("a kernel that prints to stdout")
            os.write(1, b"and writes to fd 1\n")
        total = 0.0
        for v in x["xs"]:
            total += v * v
        if mode == "slow":
            for v in x["xs"]:
                total += v * v * 0.0
        if mode == "wrong":
            total *= 1.001
        return total

    return run


def reference(axes, x, ctx):
    return sum(v * v for v in x["xs"])


if __name__ == "__main__":
    pwb.main(build, inputs=inputs, reference=reference, describe=describe,
             work=lambda axes: {"items": axes["n"], "bytes": 8 * axes["n"]},
             tolerance={"rel_l2": 1e-9}, name="toy_bench", version="3",
             cold=os.environ.get("TOY_COLD", "rotate"))
