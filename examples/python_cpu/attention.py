"""A tiny attention decode step in pure Python: the kernel of perfwatch's CPU example.

One query per head attends over seq_len keys (one decode step):

    o[h]   = softmax(scale * K . q[h]) . V        (a list of dim floats per head)
    lse[h] = log(sum(exp(scale * K . q[h])))

Real arithmetic on Python floats, no sleeps: what a variant costs is what it computes. The
variants are the algorithms a GPU kernel chooses between, at a scale a CPU runs in milliseconds:

    two_pass  all scores, then the softmax, then P.V
    online    one pass over blocks of block_n keys with an online softmax (the split-KV kernels'
              inner loop): the running max and sum are rescaled block by block
"""

import math


def scores_of(q, keys, scale):
    """scale * (q . k) for every key k."""
    return [scale * sum(a * b for a, b in zip(q, k)) for k in keys]


def two_pass(queries, keys, values, scale):
    """(o, lse) of every head: scores, softmax, then P.V."""
    outputs, lses = [], []
    dim = len(values[0])
    for q in queries:
        s = scores_of(q, keys, scale)
        m = max(s)
        p = [math.exp(x - m) for x in s]
        total = sum(p)
        acc = [0.0] * dim
        for pj, v in zip(p, values):
            for d in range(dim):
                acc[d] += pj * v[d]
        outputs.append([a / total for a in acc])
        lses.append(m + math.log(total))
    return outputs, lses


def online(queries, keys, values, scale, block_n):
    """(o, lse) of every head: blocks of block_n keys, the softmax kept online."""
    outputs, lses = [], []
    dim = len(values[0])
    for q in queries:
        m, total = -math.inf, 0.0
        acc = [0.0] * dim
        for start in range(0, len(keys), block_n):
            s = scores_of(q, keys[start:start + block_n], scale)
            m_new = max(m, max(s))
            alpha = math.exp(m - m_new)
            p = [math.exp(x - m_new) for x in s]
            total = total * alpha + sum(p)
            acc = [a * alpha for a in acc]
            for pj, v in zip(p, values[start:start + block_n]):
                for d in range(dim):
                    acc[d] += pj * v[d]
            m = m_new
        outputs.append([a / total for a in acc])
        lses.append(m + math.log(total))
    return outputs, lses


def attend(params, queries, keys, values, scale):
    """The variant's algorithm, by its params: {"algorithm": "two_pass"} or {"algorithm": "online", "block_n": N}."""
    algorithm = params.get("algorithm")
    if algorithm == "two_pass":
        return two_pass(queries, keys, values, scale)
    if algorithm == "online":
        return online(queries, keys, values, scale, int(params["block_n"]))
    raise ValueError("unknown algorithm %r" % algorithm)
