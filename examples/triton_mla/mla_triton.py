"""Split-KV sparse MLA decode in Triton: the users' kind of kernel, watched with perfwatch's kit.

The problem is kernels/README.md's (DeepSeek-V3.2 sparse MLA, one decode step):

    q        [B, H, 576] bf16   512 latent ("nope") + 64 rope dims
    kv cache [N, 576]    bf16   one row per token: latent (also the value) + rope key
    indices  [B, topk]   int32  rows each batch element attends to; -1 = masked
    o        [B, H, 512] bf16   softmax(scale * q.k) . v, v = the latent part of the row
    lse      [B, H]      fp32   natural log of sum(exp(scale * q.k)); -inf when all masked

The algorithm (the same split-KV decomposition as kernels/cuda/):
  - one program per (batch element, group of 16 heads, split); the topk indices are cut into
    tiles of BLOCK_T and the tiles dealt evenly to nsplit splits (tiles [s*T/n, (s+1)*T/n));
  - a program gathers its tiles' rows (masked indices read nothing), computes the scores on the
    tensor cores (tl.dot, bf16 in, fp32 out), keeps the softmax online (running max and sum, in
    the log2 domain), and accumulates P.V with P rounded to bf16;
  - with nsplit = 1 it writes o and lse itself; else it writes a normalised partial o (fp32) and
    a log2-domain partial lse, and a combine kernel merges the nsplit partials.
  nsplit = clamp(ceil(target_ctas / (B * head_groups)), 1, tiles), target_ctas 0 = 2 per SM.

Variant knobs, in the users' words: block_t (BLOCK_T), num_warps, num_stages (Triton's software
pipelining depth of the gathers), target_ctas (sets the split-KV factor).

Also here: the same algorithm in PyTorch (split_kv_torch), which the bench runs where there is no
GPU, and which mirrors the kernel step by step.
"""

import math

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the PyTorch version of the algorithm still works
    triton = None
    tl = None

DIM_QK = 576
DIM_V = 512
DIM_ROPE = DIM_QK - DIM_V
BLOCK_H = 16          # heads a program handles: tl.dot needs 16 rows at least
LOG2E = 1.4426950408889634
DEFAULT_SOFTMAX_SCALE = 0.07216878364870322  # 1/sqrt(192), as kernels/include/mla/problem.h


def cdiv(a, b):
    return -(-a // b)


def split_plan(batch, heads, topk, block_t, target_ctas, multiprocessors):
    """(head_groups, tiles, nsplit, ctas) of one launch."""
    head_groups = cdiv(heads, BLOCK_H)
    tiles = cdiv(topk, block_t)
    target = target_ctas if target_ctas > 0 else 2 * multiprocessors
    nsplit = max(1, min(tiles, cdiv(target, batch * head_groups)))
    return head_groups, tiles, nsplit, batch * head_groups * nsplit


if triton is not None:
    # Integers are not specialised (no recompile for batch 1, or a topk divisible by 16): one
    # binary per (BLOCK_T, SINGLE, num_warps, num_stages) serves every point.
    @triton.jit(do_not_specialize=["batch", "heads", "topk", "nsplit", "tiles"])
    def _split_kv_kernel(q_ptr, kv_ptr, idx_ptr, o_ptr, lse_ptr, opart_ptr, lsepart_ptr,
                         batch, heads, topk, nsplit, tiles, scale_log2,
                         BLOCK_H: tl.constexpr, BLOCK_T: tl.constexpr, SINGLE: tl.constexpr):
        pid = tl.program_id(0)
        split = tl.program_id(1)
        head_groups = tl.cdiv(heads, BLOCK_H)
        b = pid // head_groups
        h = (pid % head_groups) * BLOCK_H + tl.arange(0, BLOCK_H)
        h_ok = h < heads
        dl = tl.arange(0, 512)
        dr = tl.arange(0, 64)

        q_row = (b * heads + h) * 576
        q_nope = tl.load(q_ptr + q_row[:, None] + dl[None, :], mask=h_ok[:, None], other=0.0)
        q_rope = tl.load(q_ptr + q_row[:, None] + 512 + dr[None, :], mask=h_ok[:, None], other=0.0)

        t_first = split * tiles // nsplit
        t_last = (split + 1) * tiles // nsplit
        m = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l = tl.zeros([BLOCK_H], dtype=tl.float32)
        acc = tl.zeros([BLOCK_H, 512], dtype=tl.float32)
        for t in range(t_first, t_last):
            tok = t * BLOCK_T + tl.arange(0, BLOCK_T)
            idx = tl.load(idx_ptr + b * topk + tok, mask=tok < topk, other=-1)
            valid = idx >= 0
            row = idx.to(tl.int64) * 576
            k_nope = tl.load(kv_ptr + row[:, None] + dl[None, :], mask=valid[:, None], other=0.0)
            k_rope = tl.load(kv_ptr + row[:, None] + 512 + dr[None, :], mask=valid[:, None], other=0.0)
            s = tl.dot(q_nope, tl.trans(k_nope)) + tl.dot(q_rope, tl.trans(k_rope))
            s = tl.where(valid[None, :], s * scale_log2, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing yet stays 0
            alpha = tl.exp2(m - m_use)
            p = tl.exp2(s - m_use[:, None])
            l = l * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), k_nope)
            m = m_new

        has = l > 0
        l_safe = tl.where(has, l, 1.0)
        o = acc / l_safe[:, None]
        lse2 = tl.where(has, m + tl.log2(l_safe), float("-inf"))
        if SINGLE:
            out = (b * heads + h) * 512
            tl.store(o_ptr + out[:, None] + dl[None, :], o.to(tl.bfloat16), mask=h_ok[:, None])
            tl.store(lse_ptr + b * heads + h, lse2 * 0.6931471805599453, mask=h_ok)
        else:
            part = (b * heads + h) * nsplit + split
            tl.store(opart_ptr + (part * 512)[:, None] + dl[None, :], o, mask=h_ok[:, None])
            tl.store(lsepart_ptr + part, lse2, mask=h_ok)

    @triton.jit(do_not_specialize=["nsplit"])
    def _combine_kernel(opart_ptr, lsepart_ptr, o_ptr, lse_ptr, nsplit):
        # One program per (b, h): partial i has weight exp2(lse_i - max) (log2 domain).
        bh = tl.program_id(0)
        d = tl.arange(0, 512)
        base = bh * nsplit
        mx = tl.load(lsepart_ptr + base)
        for i in range(1, nsplit):
            mx = tl.maximum(mx, tl.load(lsepart_ptr + base + i))
        mx_use = tl.where(mx == float("-inf"), 0.0, mx)
        w = tl.exp2(tl.load(lsepart_ptr + base) - mx_use)
        acc = w * tl.load(opart_ptr + base * 512 + d)
        wsum = w + tl.zeros([512], dtype=tl.float32)
        for i in range(1, nsplit):
            w = tl.exp2(tl.load(lsepart_ptr + base + i) - mx_use)
            acc += w * tl.load(opart_ptr + (base + i) * 512 + d)
            wsum += w
        has = wsum > 0
        o = tl.where(has, acc / tl.where(has, wsum, 1.0), 0.0)
        tl.store(o_ptr + bh * 512 + d, o.to(tl.bfloat16))
        total = tl.max(wsum, 0)
        lse = tl.where(total > 0, (mx_use + tl.log2(tl.where(total > 0, total, 1.0))) * 0.6931471805599453,
                       float("-inf"))
        tl.store(lse_ptr + bh, lse)


class SparseMlaDecode:
    """One variant at one point: output buffers allocated once (poisoned with NaN, so an output
    the kernel never writes fails the check), then __call__(inputs) launches the split kernel
    (and the combine) on the current stream and returns (o, lse). Capturable in a CUDA graph."""

    def __init__(self, params, batch, heads, topk, device, multiprocessors, scale=DEFAULT_SOFTMAX_SCALE):
        self.block_t = int(params["block_t"])
        self.num_warps = int(params.get("num_warps", 4))
        self.num_stages = int(params.get("num_stages", 2))
        self.batch, self.heads, self.topk = batch, heads, topk
        self.head_groups, self.tiles, self.nsplit, self.ctas = split_plan(
            batch, heads, topk, self.block_t, int(params.get("target_ctas", 0)), multiprocessors)
        self.scale = scale
        self.device = torch.device(device)
        self.o = torch.full((batch, heads, DIM_V), float("nan"), dtype=torch.bfloat16, device=self.device)
        self.lse = torch.full((batch, heads), float("nan"), dtype=torch.float32, device=self.device)
        if self.nsplit > 1:
            self.o_part = torch.empty(batch * heads * self.nsplit * DIM_V, dtype=torch.float32, device=self.device)
            self.lse_part = torch.empty(batch * heads * self.nsplit, dtype=torch.float32, device=self.device)
        else:  # unused by the kernel then; any pointer will do
            self.o_part, self.lse_part = self.o, self.lse
        self.compiled = None

    def __call__(self, x):
        if self.device.type != "cuda":
            o, lse = split_kv_torch(x["q"], x["kv"], x["indices"], self.block_t, self.nsplit, self.scale)
            self.o.copy_(o)
            self.lse.copy_(lse)
            return self.o, self.lse
        grid = (self.batch * self.head_groups, self.nsplit)
        self.compiled = _split_kv_kernel[grid](
            x["q"], x["kv"], x["indices"], self.o, self.lse, self.o_part, self.lse_part,
            self.batch, self.heads, self.topk, self.nsplit, self.tiles, self.scale * LOG2E,
            BLOCK_H=BLOCK_H, BLOCK_T=self.block_t, SINGLE=self.nsplit == 1,
            num_warps=self.num_warps, num_stages=self.num_stages)
        if self.nsplit > 1:
            _combine_kernel[(self.batch * self.heads,)](self.o_part, self.lse_part, self.o, self.lse, self.nsplit,
                                                       num_warps=4)
        return self.o, self.lse

    def describe(self):
        """The launch and, once compiled, the split kernel's registers, spills and shared memory."""
        d = {"grid": [self.batch * self.head_groups, self.nsplit], "nsplit": self.nsplit, "ctas": self.ctas,
             "tiles": self.tiles, "combine": self.nsplit > 1}
        k = self.compiled
        if k is not None:
            for name, key in (("n_regs", "registers_per_thread"), ("n_spills", "spills"), ("n_max_threads", "max_threads")):
                value = getattr(k, name, None)
                if isinstance(value, int):
                    d[key] = value
            shared = getattr(getattr(k, "metadata", None), "shared", None)
            if isinstance(shared, int):
                d["shared_bytes"] = shared
        return d


def split_kv_torch(q, kv, indices, block_t, nsplit, scale=DEFAULT_SOFTMAX_SCALE):
    """The kernel's algorithm in PyTorch, tile by tile and split by split (fp32, P rounded to bf16
    before P.V): the bench's CPU path, and a mirror of the kernel to read it against."""
    batch, heads, _ = q.shape
    topk = indices.shape[1]
    tiles = cdiv(topk, block_t)
    qf = q.float()
    scale_log2 = scale * LOG2E
    neg_inf = float("-inf")
    o_part = torch.zeros(batch, heads, nsplit, DIM_V, device=q.device)
    lse_part = torch.full((batch, heads, nsplit), neg_inf, device=q.device)
    for split in range(nsplit):
        first, last = split * tiles // nsplit, (split + 1) * tiles // nsplit
        m = torch.full((batch, heads), neg_inf, device=q.device)
        l = torch.zeros(batch, heads, device=q.device)
        acc = torch.zeros(batch, heads, DIM_V, device=q.device)
        for t in range(first, last):
            idx = indices[:, t * block_t:(t + 1) * block_t]
            valid = idx >= 0
            rows = kv[idx.clamp(min=0).long()].float() * valid[..., None]
            s = torch.einsum("bhd,btd->bht", qf, rows) * scale_log2
            s = s.masked_fill(~valid[:, None, :], neg_inf)
            m_new = torch.maximum(m, s.amax(-1))
            m_use = torch.where(m_new == neg_inf, torch.zeros_like(m_new), m_new)
            alpha = torch.exp2(m - m_use)
            p = torch.exp2(s - m_use[..., None])
            l = l * alpha + p.sum(-1)
            acc = acc * alpha[..., None] + torch.einsum("bht,btd->bhd", p.bfloat16().float(), rows[..., :DIM_V])
            m = m_new
        has = l > 0
        l_safe = torch.where(has, l, torch.ones_like(l))
        o_part[:, :, split] = acc / l_safe[..., None]
        lse_part[:, :, split] = torch.where(has, m + torch.log2(l_safe), torch.full_like(l, neg_inf))
    mx = lse_part.amax(-1)
    mx_use = torch.where(mx == neg_inf, torch.zeros_like(mx), mx)
    w = torch.exp2(lse_part - mx_use[..., None])
    total = w.sum(-1)
    has = total > 0
    o = torch.where(has[..., None], (w[..., None] * o_part).sum(2) / torch.where(has, total, torch.ones_like(total))[..., None],
                    torch.zeros(1, device=q.device))
    lse = torch.where(has, (mx_use + torch.log2(torch.where(has, total, torch.ones_like(total)))) * math.log(2.0),
                      torch.full_like(total, neg_inf))
    return o.bfloat16(), lse


def reference_f64(q, kv, indices, scale=DEFAULT_SOFTMAX_SCALE):
    """The float64 reference (kernels/src/reference.cpp, in PyTorch): every selected row in
    float64, a plain masked softmax, o = P.V / sum, lse = max + log(sum); a batch element whose
    indices are all masked gets o = 0 and lse = -inf."""
    valid = indices >= 0
    rows = kv[indices.clamp(min=0).long()].double()                     # [B, topk, 576]
    s = torch.einsum("bhd,btd->bht", q.double(), rows) * scale          # [B, H, topk]
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    m = s.amax(-1)
    any_valid = valid.any(-1)[:, None].expand_as(m)
    m_use = torch.where(any_valid, m, torch.zeros_like(m))
    p = torch.exp(s - m_use[..., None])                                  # masked: exp(-inf) = 0
    total = p.sum(-1)
    o = torch.einsum("bht,btd->bhd", p, rows[..., :DIM_V]) / torch.where(any_valid, total, torch.ones_like(total))[..., None]
    lse = torch.where(any_valid, m_use + torch.log(torch.where(any_valid, total, torch.ones_like(total))),
                      torch.full_like(total, float("-inf")))
    return o, lse


def compare(o, lse, ref_o, ref_lse):
    """kernels/src/reference.cpp's compare: (errors, reason or None). errors: rel_l2_o (relative
    L2 error of o, NaN when o has a NaN), max_abs_lse (over rows with something to attend to),
    nonfinite (NaN or infinite outputs, -inf lse of a masked row excepted), masked_rows_wrong
    (fully masked rows whose o is not 0 or lse not -inf)."""
    got = o.double().to(ref_o.device)
    g_lse = lse.double().to(ref_o.device)
    masked = torch.isinf(ref_lse)
    nonfinite = int((~torch.isfinite(got)).sum()) + int(torch.isnan(g_lse).sum()) + \
        int((torch.isinf(g_lse) & ~masked).sum())
    if bool(torch.isnan(got).any()):
        rel = float("nan")
    else:
        ref2 = float((ref_o * ref_o).sum())
        err2 = float(((got - ref_o) ** 2).sum())
        rel = math.sqrt(err2 / ref2) if ref2 > 0 else math.sqrt(err2)
    live = ~masked
    if bool(live.any()):
        diff = (g_lse - ref_lse)[live].abs()
        max_lse = float("nan") if bool(torch.isnan(diff).any()) else float(diff.max())
    else:
        max_lse = 0.0
    o_masked_wrong = (got != 0).any(-1) & masked
    lse_masked_wrong = masked & ~(torch.isinf(g_lse) & (g_lse < 0))
    masked_wrong = int((o_masked_wrong | lse_masked_wrong).sum())
    errors = {"rel_l2_o": rel, "max_abs_lse": max_lse, "nonfinite": float(nonfinite),
              "masked_rows_wrong": float(masked_wrong)}
    reason = None
    if nonfinite:
        reason = "%d outputs are NaN or infinite (left unwritten, or computed)" % nonfinite
    elif masked_wrong:
        reason = "%d fully masked rows do not have o = 0 and lse = -inf" % masked_wrong
    return errors, reason
