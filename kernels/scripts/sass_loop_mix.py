#!/usr/bin/env python3
"""Instruction mix of a kernel's main loop in `cuobjdump --dump-sass` output.

usage: sass_loop_mix.py NAME_SUBSTRING FILE.sass [FILE2.sass ...]

For each file, the first function whose mangled name contains NAME_SUBSTRING
(e.g. Li32ELi4ELi2ELi16ELNS_7KvDtypeE1 = split_kv_kernel<32,4,2,16,fp8>): the
instructions from the target of its longest backward branch to that branch
(the tile loop of the split kernel), counted by opcode (modifiers dropped).
"""
import collections
import re
import sys


def loop_mix(path, want):
    text = open(path).read()
    for part in re.split(r"\n\s+Function : ", text)[1:]:
        name = part.split("\n", 1)[0]
        if want not in name:
            continue
        lines = [(int(a, 16), b.strip()) for a, b in re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", part)]
        back = []
        for addr, ins in lines:
            m = re.search(r"BRA\s+0x([0-9a-f]+)", ins)
            if m and int(m.group(1), 16) < addr:
                back.append((int(m.group(1), 16), addr))
        if not back:
            return name, len(lines), []
        first, last = max(back, key=lambda x: x[1] - x[0])
        body = [ins for addr, ins in lines if first <= addr <= last]
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0].split(".")[0] for ins in body)
        return name, len(lines), (len(body), sorted(ops.items(), key=lambda kv: -kv[1]))
    return None


def main():
    want = sys.argv[1]
    for path in sys.argv[2:]:
        r = loop_mix(path, want)
        if r is None:
            print("%s: no function matching %s" % (path, want))
            continue
        name, total, loop = r
        print("%s: %s, %d instructions" % (path, name, total))
        if loop:
            n, ops = loop
            print("  main loop: %d instructions: %s" % (n, " ".join("%s:%d" % kv for kv in ops)))


if __name__ == "__main__":
    main()
