#!/usr/bin/env python3
"""Compares the SASS of the split kernels in two builds, kernel by kernel.

usage: sass_diff.py OLD_SASS NEW_SASS    (cuobjdump --dump-sass output of each build's variant objects)

A kernel is matched by its shape (block_t, num_warps, num_stages, block_h)
and dtype (bf16 when the name has none), read from the mangled name; the
instructions are compared with addresses and encodings stripped. Prints one
line per kernel (identical, or the instruction counts and the opcodes whose
counts differ) and a summary line last.
"""
import collections
import re
import sys

NAME = re.compile(r"split_kv_kernelILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)E(?:LNS_7KvDtypeE(\d)E)?")
INSN = re.compile(r"^\s+/\*[0-9a-f]+\*/\s+(.*?)\s*;?\s*(?:/\*.*)?$")


def kernels(path):
    out, cur = {}, None
    arch = "?"
    with open(path, errors="replace") as f:
        for line in f:
            if "arch = " in line:
                m = re.search(r"arch = (sm_\d+)", line)
                if m:
                    arch = m.group(1)
            if "Function :" in line:
                m = NAME.search(line)
                cur = None
                if m:
                    bt, w, s, bh, dt = m.groups()
                    key = (arch, int(bt), int(w), int(s), int(bh), "fp8" if dt == "1" else "bf16")
                    cur = out.setdefault(key, [])
                continue
            if cur is None:
                continue
            m = INSN.match(line)
            if m:
                text = m.group(1)
                # Branch targets are addresses: keep the opcode and the rest
                # without the hex offsets.
                text = re.sub(r"0x[0-9a-f]+", "0x*", text)
                cur.append(text)
    return out


def opcode(insn):
    insn = re.sub(r"^@!?U?P\w+\s+", "", insn)
    return insn.split()[0].split(".")[0] if insn else ""


def main():
    old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
    same = differ = missing = 0
    for key in sorted(old):
        arch, bt, w, s, bh, dt = key
        name = "%s split_kv<bt%d,w%d,s%d,bh%d> %s" % (arch, bt, w, s, bh, dt)
        if key not in new:
            print("%s: missing in the new build" % name)
            missing += 1
            continue
        a, b = old[key], new[key]
        if a == b:
            print("%s: identical (%d instructions)" % (name, len(a)))
            same += 1
            continue
        differ += 1
        ca = collections.Counter(opcode(x) for x in a)
        cb = collections.Counter(opcode(x) for x in b)
        delta = {k: cb[k] - ca[k] for k in set(ca) | set(cb) if cb[k] != ca[k]}
        print("%s: DIFFERENT: %d -> %d instructions; opcode count changes: %s" % (
            name, len(a), len(b), ", ".join("%s %+d" % kv for kv in sorted(delta.items())) or "none (order or registers differ)"))
    print("SASS: %d kernels identical, %d different, %d missing (old build: %d kernels, new: %d)"
          % (same, differ, missing, len(old), len(new)))


if __name__ == "__main__":
    main()
