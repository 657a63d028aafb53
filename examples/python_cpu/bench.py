#!/usr/bin/env python3
"""The bench of the CPU example, written with perfwatch's Python kit (perfwatch_bench.py).

The kit speaks the protocol; this file only says what a point's inputs are, how a variant runs,
what the right answer is and what one call does (keys attended, for keys_per_s).
"""

import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The kit: a copy beside this file (as in the repo make_history.sh makes), else perfwatch's kit/.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "kit")]

import attention  # noqa: E402
import perfwatch_bench as pwb  # noqa: E402


def make_set(axes, seed):
    rng = random.Random(seed)
    dim = axes["dim"]

    def rows(count):
        return [[rng.gauss(0.0, 1.0) for _ in range(dim)] for _ in range(count)]

    return {"queries": rows(axes["heads"]), "keys": rows(axes["seq_len"]), "values": rows(axes["seq_len"]),
            "scale": 1.0 / math.sqrt(dim)}


def inputs(axes, sets, ctx):
    # Every set (and the check set) from its own seed: the rotation really reads other lists.
    return pwb.Inputs([make_set(axes, ctx.seed * 1000 + s) for s in range(sets)],
                      check=make_set(axes, ctx.seed * 1000 + 999))


def describe(params, ctx):
    algorithm = params.get("algorithm")
    if algorithm == "two_pass":
        return {"ignored_params": [k for k in params if k != "algorithm"]}
    if algorithm == "online":
        block_n = params.get("block_n")
        if not isinstance(block_n, int) or isinstance(block_n, bool) or block_n < 1:
            raise pwb.Infeasible("online needs an integer block_n >= 1, not %r" % (block_n,))
        return {"ignored_params": [k for k in params if k not in ("algorithm", "block_n")]}
    raise pwb.Infeasible("unknown algorithm %r (two_pass, online)" % (algorithm,))


def build(params, axes, ctx):
    return lambda x: attention.attend(params, x["queries"], x["keys"], x["values"], x["scale"])


def reference(axes, x, ctx):
    """The same step with exactly rounded sums (math.fsum) and no blocking."""
    outputs, lses = [], []
    values = x["values"]
    for q in x["queries"]:
        s = [x["scale"] * math.fsum(a * b for a, b in zip(q, k)) for k in x["keys"]]
        m = max(s)
        p = [math.exp(v - m) for v in s]
        total = math.fsum(p)
        outputs.append([math.fsum(pj * v[d] for pj, v in zip(p, values)) / total for d in range(len(values[0]))])
        lses.append(m + math.log(total))
    return outputs, lses


if __name__ == "__main__":
    pwb.main(build, inputs=inputs, reference=reference, describe=describe,
             work=lambda axes: {"keys": axes["heads"] * axes["seq_len"]},
             tolerance={"rel_l2": 1e-12, "max_abs": 1e-9}, name="attention_bench")
