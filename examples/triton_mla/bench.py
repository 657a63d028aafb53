#!/usr/bin/env python3
"""The bench of the Triton sparse MLA decode kernel, written with perfwatch's kit.

The kit speaks the protocol, times the calls (CUDA graph, events, input rotation, SM clock) and
holds the check's errors to the manifest's tolerances; this file says what a point's inputs are
(as kernels/ makes them: every (input set, batch element) has its own region of the KV cache, so
rotating sets really walks new memory), how a variant runs (mla_triton.SparseMlaDecode), what
the right answer is (the float64 reference) and what one step does (tokens = batch, bytes).

Plan params (the manifest's bench.params): tolerance {rel_l2_o, max_abs_lse}, masked_fraction
(of the check set's indices, 0.1), context_rows (KV rows each (set, batch element) may select
from, 8192), softmax_scale (1/sqrt(192)).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "kit")]

import perfwatch_bench as pwb  # noqa: E402

try:
    import torch
    import mla_triton
except ImportError as e:  # every variant is then infeasible, and says why
    torch = None
    MISSING = "this bench needs PyTorch: %s" % e

KNOWN = ("block_t", "num_warps", "num_stages", "target_ctas")


def setting(ctx, name, default):
    return ctx.params.get(name, default)


def describe(params, ctx):
    if torch is None:
        raise pwb.Infeasible(MISSING)
    block_t = params.get("block_t")
    if block_t not in (16, 32, 64, 128):
        raise pwb.Infeasible("block_t must be 16, 32, 64 or 128 (tl.dot needs 16 at least), not %r" % (block_t,))
    warps = params.get("num_warps", 4)
    if warps not in (1, 2, 4, 8, 16):
        raise pwb.Infeasible("num_warps must be 1, 2, 4, 8 or 16, not %r" % (warps,))
    stages = params.get("num_stages", 2)
    if not isinstance(stages, int) or isinstance(stages, bool) or not 1 <= stages <= 8:
        raise pwb.Infeasible("num_stages must be an integer from 1 to 8, not %r" % (stages,))
    tc = params.get("target_ctas", 0)
    if not isinstance(tc, int) or isinstance(tc, bool) or tc < 0:
        raise pwb.Infeasible("target_ctas must be an integer >= 0 (0 = two per SM), not %r" % (tc,))
    ignored = [k for k in params if k not in KNOWN]
    if ctx.device != "cuda":
        ignored += ["num_warps", "num_stages"]  # the PyTorch version of the algorithm has no such knobs
    return {"ignored_params": ignored}


def work(axes):
    b, h, k = axes["batch"], axes["heads"], axes["topk"]
    # kernels/src/problem.cpp's bytes_per_step: gathered rows, q, o, lse, indices.
    moved = b * k * mla_triton.DIM_QK * 2 + b * h * mla_triton.DIM_QK * 2 + b * h * mla_triton.DIM_V * 2 + b * h * 4 + b * k * 4
    flops = 2.0 * b * h * k * (mla_triton.DIM_QK + mla_triton.DIM_V)
    return {"tokens": b, "bytes": moved, "flops": flops}


def inputs(axes, sets, ctx):
    b, h, topk = axes["batch"], axes["heads"], axes["topk"]
    context = int(setting(ctx, "context_rows", 8192))
    if context < topk:
        raise ValueError("params.context_rows (%d) must be >= topk (%d) for distinct indices" % (context, topk))
    dev = ctx.torch_device or torch.device("cpu")
    gen = torch.Generator(device=dev)
    gen.manual_seed(ctx.seed & 0x7FFFFFFFFFFFFFFF)
    # sets timing regions + 1 check region per batch element, rows filled on the device.
    kv = torch.randn(((sets + 1) * b * context, mla_triton.DIM_QK), generator=gen, device=dev, dtype=torch.bfloat16)

    def one(s, masked_fraction):
        q = torch.randn((b, h, mla_triton.DIM_QK), generator=gen, device=dev, dtype=torch.bfloat16)
        # topk distinct rows of each batch element's own region, in random order.
        order = torch.rand((b, context), generator=gen, device=dev).argsort(dim=1)[:, :topk]
        base = (s * b + torch.arange(b, device=dev)) * context
        idx = (order + base[:, None]).to(torch.int32)
        if masked_fraction > 0:
            drop = torch.rand((b, topk), generator=gen, device=dev) < masked_fraction
            idx = idx.masked_fill(drop, -1)
            if b > 1:  # a short sequence: a tail-masked batch element (a partial last tile)
                idx[1, topk // 3 + 1:] = -1
            if b > 2:  # nothing to attend to: o = 0, lse = -inf
                idx[2, :] = -1
        return {"q": q, "kv": kv, "indices": idx.contiguous()}

    timing = [one(s, 0.0) for s in range(sets)]
    check = one(sets, float(setting(ctx, "masked_fraction", 0.1)))
    return pwb.Inputs(timing, check=check,
                      detail={"kv_cache_bytes": kv.numel() * 2, "context_rows": context})


def build(params, axes, ctx):
    if torch is None:
        raise pwb.Infeasible(MISSING)
    decode = mla_triton.SparseMlaDecode(
        params, axes["batch"], axes["heads"], axes["topk"], ctx.torch_device or "cpu", ctx.multiprocessors,
        scale=float(setting(ctx, "softmax_scale", mla_triton.DEFAULT_SOFTMAX_SCALE)))
    return pwb.Case(decode, detail=lambda: {"launch": decode.describe()})


def reference(axes, x, ctx):
    return mla_triton.reference_f64(x["q"], x["kv"], x["indices"],
                                    float(setting(ctx, "softmax_scale", mla_triton.DEFAULT_SOFTMAX_SCALE)))


def compare(output, expected, ctx):
    errors, reason = mla_triton.compare(output[0], output[1], expected[0], expected[1])
    if reason:
        raise pwb.Incorrect(reason, errors)
    return errors


if __name__ == "__main__":
    pwb.main(build, inputs=inputs, reference=reference, compare=compare, describe=describe,
             work=work if torch is not None else (lambda axes: {"tokens": axes["batch"]}),
             tolerance={"rel_l2_o": 0.01, "max_abs_lse": 0.001}, name="mla_triton_bench", version="1")
