"""perfwatch_bench: a perfwatch bench in a few lines of Python (bench protocol version 2).

One file, the standard library only; PyTorch (CUDA events, CUDA graphs), Triton (the SM clock
probe) and NVML (pynvml) are used when they are there. Copy it into your repo, or put kit/ on
sys.path, and write:

    import perfwatch_bench as pwb

    def build(params, axes, ctx):          # the callable of one variant at one point
        return lambda inputs: my_kernel(inputs, block=params["block"])

    pwb.main(build,
             inputs=lambda axes, sets, ctx: pwb.Inputs([make(axes, ctx.seed + s) for s in range(sets)]),
             reference=lambda axes, check_inputs, ctx: slow_but_right(check_inputs),
             work=lambda axes: {"tokens": axes["batch"], "bytes": moved_bytes(axes)})

The runner (perfwatch) starts the program, writes a plan and measure requests on its stdin and
reads protocol lines on its stdout (schemas/bench/v2/README.md); main() speaks all of it:

  header    device (GPU name, UUID, SMs, clocks, driver, CUDA) or the CPU, the timer, the build
            id (a hash of the bench script, the modules loaded from its folder and this kit),
            the versions of python, torch, triton.
  variant   one per plan variant: ok, or infeasible (describe() raised) with the reason.
  check     the first time a variant meets a point: the callable's output on the check inputs
            against reference(), each error that compare() returns held to the tolerance of the
            same name in the plan's params.tolerance (or main's tolerance=): ok, incorrect (with
            the errors and the tolerances) or infeasible (out of resources, out of memory, a
            build or compile that raises). Only ok is ever timed.
  trial     one timed batch of calls lasting at least the plan's min_trial_ms: time per call and
            every declared metric the kit can compute: time_us/time_ns/time_ms/time_s, and
            X_per_s = work(axes)["X"] / time per call (tokens_per_s, bytes_per_s, flops_per_s);
            on the CPU also cpu_time_us/cpu_time_ms (the process's CPU time per call).
  skipped   a measure request for a variant x point that is not ok.
  footer    when stdin closes; then exit 0.
  error     the bench cannot go on (bad plan: exit 2; device or bench failure: exit 1).

How a trial is timed (kit/README.md says it at length):
  GPU (PyTorch with CUDA): CUDA events around a CUDA graph of many calls where the calls capture,
  plain launches where they do not (the check line's detail.timing says which); the calls rotate
  over input sets whose total is at least twice the L2 (or, with cold="flush", the L2 is flushed
  before each call and each call is timed alone); the SM clock of each trial is measured by a
  Triton probe (clock64 against %globaltimer on every SM, before and after the trial), else read
  once from NVML while the trial runs, else not at all (null); a trial below 75 % of the
  device's default SM clock is marked throttled.
  CPU (no GPU, or the plan asks for cpu): time.perf_counter_ns around the calls; the header says
  timer "wall_clock" and why; clock_mhz is null.

A user exception inside one variant x point makes that cell incorrect (or infeasible, when it is
about resources) and the run goes on; anything printed to stdout by user code goes to stderr,
so it cannot break the protocol.
"""

import ctypes
import hashlib
import json
import math
import os
import platform
import re
import statistics
import sys
import time
import traceback

KIT_NAME = "perfwatch_bench.py"
KIT_VERSION = 1
PROTOCOL_VERSION = 2

EXIT_OK = 0
EXIT_FAILED = 1     # the device or the bench failed
EXIT_BAD_INPUT = 2  # a bad plan or request: the caller's mistake

# Set only when Triton is imported (the SM clock probe's kernel refers to it by this global name).
tl = None


# ============================================================================ public API

class Infeasible(Exception):
    """Raise from describe(), build() or the callable: this variant cannot run here (at this point).

    The message is the reason shown to people ("needs 232448 bytes of shared memory, 232448 > 227 KiB").
    """


class Incorrect(Exception):
    """Raise from compare(): the output is wrong in a way no tolerance covers (wrong shape, NaN,
    masked rows not zero). errors (name -> number) are reported with it."""

    def __init__(self, reason, errors=None):
        super().__init__(reason)
        self.reason = str(reason)
        self.errors = dict(errors or {})


class Inputs:
    """What inputs(axes, sets, ctx) returns: `sets` timing input sets (a list; the calls of a
    trial rotate over them so each call reads memory the previous ones did not leave in cache)
    and the check set (default: sets[0]) that the correctness check runs on. detail (a dict) is
    shown in the check line, for people."""

    def __init__(self, sets, check=None, detail=None):
        self.sets = list(sets)
        if not self.sets:
            raise ValueError("Inputs: at least one input set is needed")
        self.check = self.sets[0] if check is None else check
        self.detail = dict(detail or {})


class Case:
    """What build() may return instead of a bare callable: `run(inputs)` is the call that is
    checked and timed; detail (a dict, or a function returning one, evaluated after the check's
    call, e.g. a compiled kernel's registers and shared memory) is shown in the check line."""

    def __init__(self, run, detail=None):
        if not callable(run):
            raise TypeError("Case: run must be callable")
        self.run = run
        self.detail = detail


class Context:
    """Handed to every user function. Read-only by convention.

    device         "cuda" or "cpu": where the callables run and how they are timed
    torch_device   torch.device("cuda", i) on the GPU, else None
    seed           the plan's input seed (or the one the kit picked; it is in the header)
    params         the plan's params: the manifest's bench.params, untouched
    cache_bytes    the L2 of the GPU, or the last-level cache of the CPU (32 MiB when unknown)
    multiprocessors  SMs of the GPU, or CPU threads this process may use
    point          the id of the point being prepared or checked, else None
    """

    def __init__(self, device, torch_device, seed, params, cache_bytes, multiprocessors):
        self.device = device
        self.torch_device = torch_device
        self.seed = seed
        self.params = params
        self.cache_bytes = cache_bytes
        self.multiprocessors = multiprocessors
        self.point = None

    @staticmethod
    def log(message):
        """A line on stderr (kept by perfwatch as the run's log)."""
        print("%s: %s" % (KIT_NAME, message), file=sys.stderr, flush=True)


def main(build, **options):
    """Speaks the protocol on stdin/stdout until stdin closes, then exits the process.

    build(params, axes, ctx) -> callable(inputs) (or callable() without an inputs function), or
        a Case. Raising Infeasible (or anything) makes the cell infeasible with the reason.
    Options (all optional):
      inputs(axes, sets, ctx) -> Inputs     input sets of a point, made once per point
      reference(axes, check_inputs, ctx)    the expected output of the check set (computed once a
                                            point); without it the check only runs the call
      compare(output, expected, ctx) -> {error name: number}; default compare_outputs (max_abs,
                                            rel_l2). May raise Incorrect.
      tolerance {error name: bound}         defaults; the plan's params.tolerance overrides by name
      work(axes) -> {name: count per call}  what one call does: tokens, bytes, flops, ...; gives
                                            the X_per_s metrics; work["bytes"] also sizes the
                                            input rotation
      describe(params, ctx) -> {"resources": {...}, "ignored_params": [...]} or None; raise
                                            Infeasible for a variant that cannot run at all
      name, version                         the header's bench field (default: the script's name)
      sources                               more files (relative to the script) in the build id
      cold                                  "rotate" (default) or "flush" (see the module doc)
      min_sets, max_sets                    bounds of the rotation's input sets (2, 64)
      argv                                  instead of sys.argv[1:] (--help, --version)
    """
    sys.exit(run(build, **options))


def run(build, **options):
    """main() without the exit: returns the exit code (0 ok, 1 failed, 2 bad input)."""
    argv = options.pop("argv", None)
    argv = sys.argv[1:] if argv is None else list(argv)
    bench = _Bench(build, options)
    for arg in argv:
        if arg in ("-h", "--help"):
            print(_usage(bench.name))
            return EXIT_OK
        if arg == "--version":
            build_info = bench.build_info()
            print("%s (%s %d, bench protocol version %d)\nbuild: %s" %
                  (bench.name, KIT_NAME, KIT_VERSION, PROTOCOL_VERSION, build_info["id"]))
            return EXIT_OK
        print("%s: unknown argument %s (try --help)" % (bench.name, arg), file=sys.stderr)
        return EXIT_BAD_INPUT
    with _ProtocolOut() as out:
        return bench.serve(out)


def compare_outputs(output, expected, ctx=None):
    """The default compare: max_abs and rel_l2 (sqrt(sum (o - e)^2 / sum e^2)) over every value,
    in float64. Outputs may be numbers, nested lists or tuples, numpy arrays or torch tensors
    (of the same structure as expected). Raises Incorrect on a structure or size mismatch."""
    sums = [0.0, 0.0, 0.0]  # sum of squared errors, sum of squared expected values, max abs error
    _accumulate_errors(output, expected, sums, "output")
    err2, ref2, max_abs = sums
    rel = math.sqrt(err2 / ref2) if ref2 > 0 else math.sqrt(err2)
    return {"max_abs": max_abs, "rel_l2": rel}


# ============================================================================ protocol I/O

class _Fail(Exception):
    """The bench cannot go on: an error line naming `where`, then the exit code."""

    def __init__(self, code, where, message):
        super().__init__(message)
        self.code = code
        self.where = where
        self.message = message


class _ProtocolOut:
    """The protocol's stdout. Lines go to a duplicate of fd 1, and fd 1 itself (and sys.stdout)
    points at stderr while the bench runs, so a print() in user code, or a compiler writing to
    fd 1, lands in the log instead of breaking the protocol."""

    def __enter__(self):
        sys.stdout.flush()
        self._saved_fd = os.dup(1)
        self._stream = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
        os.dup2(2, 1)
        self._saved_stdout = sys.stdout
        sys.stdout = sys.stderr
        self.trials = 0
        return self

    def __exit__(self, *exc):
        try:
            self._stream.close()
        except OSError:
            pass
        sys.stdout = self._saved_stdout
        os.dup2(self._saved_fd, 1)
        os.close(self._saved_fd)
        return False

    def write(self, line):
        text = json.dumps(line, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
        self._stream.write(text + "\n")
        self._stream.flush()
        if line.get("kind") == "trial":
            self.trials += 1


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}\Z")
_BACKEND = re.compile(r"[A-Za-z0-9_.+-]{1,32}\Z")
_PRINTABLE = re.compile(r"[^\x00-\x1f\x7f]+\Z")
_DIRECTIONS = ("lower_is_better", "higher_is_better")
_TIME_METRICS = {"time_s": 1e-6, "time_ms": 1e-3, "time_us": 1.0, "time_ns": 1e3}  # per microsecond
# The process's CPU time per call (time.process_time_ns; CPU backend only): steadier than the
# wall clock on a machine shared with other work, since time spent waiting for a core is not in it.
_CPU_TIME_METRICS = {"cpu_time_us": 1.0, "cpu_time_ms": 1e-3}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _bad(where, message):
    return _Fail(EXIT_BAD_INPUT, where, "%s: %s" % (where, message))


def _expect_object(doc, where, required, allowed):
    if not isinstance(doc, dict):
        raise _bad(where, "must be a JSON object")
    for key in required:
        if key not in doc:
            raise _bad(where + "." + key if where != "plan" else key, "missing (required)")
    for key in doc:
        if key not in allowed:
            raise _bad(key if where == "plan" else where + "." + key,
                       "unknown field (allowed: %s)" % ", ".join(sorted(allowed)))


class _Plan:
    """The plan, checked field by field: every mistake names the field."""

    def __init__(self, doc):
        if isinstance(doc, dict) and doc.get("kind", "plan") != "plan":
            raise _bad("kind", 'the first line must be the plan ("kind": "plan"), not %s' % json.dumps(doc["kind"]))
        _expect_object(doc, "plan", ("kind", "schema_version", "variants", "points", "metrics", "judged_metric"),
                       ("kind", "schema_version", "backend", "seed", "variants", "points", "metrics",
                        "judged_metric", "params", "timing"))
        if doc["schema_version"] != PROTOCOL_VERSION or not _is_int(doc["schema_version"]):
            raise _bad("schema_version", "%s: this bench speaks bench protocol version %d only (%s %d)"
                       % (json.dumps(doc["schema_version"]), PROTOCOL_VERSION, KIT_NAME, KIT_VERSION))
        self.backend = doc.get("backend", "auto")
        if not isinstance(self.backend, str) or not _BACKEND.match(self.backend):
            raise _bad("backend", "must be a short name such as auto, cpu or cuda")
        if self.backend not in ("auto", "cpu", "cuda"):
            raise _bad("backend", '"%s": this bench knows auto, cpu and cuda' % self.backend)
        self.seed = doc.get("seed", 0)
        if not _is_int(self.seed) or self.seed < 0:
            raise _bad("seed", "must be an integer >= 0")

        variants = doc["variants"]
        if not isinstance(variants, list) or not variants:
            raise _bad("variants", "must be a non-empty array")
        self.variants = []
        seen = set()
        for i, v in enumerate(variants):
            where = "variants[%d]" % i
            _expect_object(v, where, ("name", "params"), ("name", "params"))
            if not isinstance(v["name"], str) or not _NAME.match(v["name"]):
                raise _bad(where + ".name", "must be 1-64 characters of A-Z a-z 0-9 _ . + -")
            if v["name"] in seen:
                raise _bad(where + ".name", '"%s" appears twice' % v["name"])
            seen.add(v["name"])
            params = v["params"]
            if not isinstance(params, dict):
                raise _bad(where + ".params", "must be an object")
            for key, value in params.items():
                if not _IDENTIFIER.match(key):
                    raise _bad(where + ".params." + key, "is not an identifier")
                if not isinstance(value, (bool, int, float, str)) or (isinstance(value, float) and not math.isfinite(value)):
                    raise _bad(where + ".params." + key, "must be an integer, number, string or boolean")
            self.variants.append((v["name"], params))

        points = doc["points"]
        if not isinstance(points, list) or not points:
            raise _bad("points", "must be a non-empty array")
        self.points = []
        seen = set()
        for i, p in enumerate(points):
            where = "points[%d]" % i
            _expect_object(p, where, ("id", "axes"), ("id", "axes"))
            pid = p["id"]
            if not isinstance(pid, str) or not 1 <= len(pid) <= 128 or not _PRINTABLE.match(pid):
                raise _bad(where + ".id", "must be 1-128 printable characters")
            if pid in seen:
                raise _bad(where + ".id", '"%s" appears twice' % pid)
            seen.add(pid)
            axes = p["axes"]
            if not isinstance(axes, dict) or not axes:
                raise _bad(where + ".axes", "must be a non-empty object")
            for key, value in axes.items():
                if not _IDENTIFIER.match(key):
                    raise _bad(where + ".axes." + key, "is not an identifier")
                ok = _is_number(value) or (isinstance(value, str) and 1 <= len(value) <= 64 and _PRINTABLE.match(value))
                if not ok:
                    raise _bad(where + ".axes." + key, "must be an integer, a number or a short printable string")
            self.points.append((pid, axes))

        metrics = doc["metrics"]
        if not isinstance(metrics, list) or not metrics:
            raise _bad("metrics", "must be a non-empty array")
        self.metrics = []
        seen = set()
        for i, m in enumerate(metrics):
            where = "metrics[%d]" % i
            _expect_object(m, where, ("name", "unit", "direction"), ("name", "unit", "direction", "description"))
            if not isinstance(m["name"], str) or not _IDENTIFIER.match(m["name"]):
                raise _bad(where + ".name", "must be an identifier")
            if m["name"] in seen:
                raise _bad(where + ".name", '"%s" appears twice' % m["name"])
            seen.add(m["name"])
            if not isinstance(m["unit"], str) or not 1 <= len(m["unit"]) <= 32:
                raise _bad(where + ".unit", "must be a string of 1-32 characters")
            if m["direction"] not in _DIRECTIONS:
                raise _bad(where + ".direction", "must be lower_is_better or higher_is_better")
            self.metrics.append(m["name"])
        self.judged = doc["judged_metric"]
        if self.judged not in seen:
            raise _bad("judged_metric", '"%s" is not one of the declared metrics (%s)'
                       % (self.judged, ", ".join(self.metrics)))

        self.params = doc.get("params", {})
        if not isinstance(self.params, dict):
            raise _bad("params", "must be an object")
        timing = doc.get("timing", {})
        _expect_object(timing, "timing", (), ("min_trial_ms", "warmup_ms"))
        self.min_trial_ms = timing.get("min_trial_ms", 20)
        self.warmup_ms = timing.get("warmup_ms", 50)
        if not _is_number(self.min_trial_ms) or self.min_trial_ms <= 0:
            raise _bad("timing.min_trial_ms", "must be a number > 0")
        if not _is_number(self.warmup_ms) or self.warmup_ms < 0:
            raise _bad("timing.warmup_ms", "must be a number >= 0")


def _parse_measure(doc, where):
    _expect_object(doc, where, ("kind", "variant", "point", "trials"), ("kind", "variant", "point", "trials"))
    if doc["kind"] != "measure":
        raise _bad(where + ".kind", 'after the plan every line must be a measure request, not %s' % json.dumps(doc["kind"]))
    if not isinstance(doc["variant"], str) or not isinstance(doc["point"], str):
        raise _bad(where, "variant and point must be strings")
    trials = doc["trials"]
    if not _is_int(trials) or not 1 <= trials <= 10000:
        raise _bad(where + ".trials", "must be an integer from 1 to 10000")
    return doc["variant"], doc["point"], trials


def _usage(name):
    return """%s: a perfwatch bench (bench protocol version %d, written with %s %d).

usage: %s < requests        (also: --help, --version)

stdin, one JSON object per line (schemas/bench/v2/):
  line 1   the plan: {"kind":"plan","schema_version":2,"variants":[{"name","params"}],
           "points":[{"id","axes"}],"metrics":[{"name","unit","direction"}],"judged_metric",
           "params":{"tolerance":{...}},"timing":{"min_trial_ms","warmup_ms"},"seed","backend"}
  then     measure requests: {"kind":"measure","variant":NAME,"point":ID,"trials":N}
  EOF      ends the run.
stdout: header, one variant line per variant, check / trial / skipped lines answering the
requests, a footer; an error line and a non-zero exit (2: bad plan or request, 1: failure)
when the bench cannot go on. Diagnostics go to stderr.""" % (name, PROTOCOL_VERSION, KIT_NAME, KIT_VERSION, name)


# ============================================================================ the device

def _exception_text(e, limit=600):
    text = "%s: %s" % (type(e).__name__, str(e).strip() or "(no message)")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_resource_error(e):
    """Out of resources: shared memory or registers (Triton's OutOfResources), memory (CUDA or host)."""
    names = {c.__name__ for c in type(e).__mro__}
    if names & {"OutOfResources", "OutOfMemoryError", "MemoryError"}:
        return True
    return "out of memory" in str(e).lower()


def _is_compile_error(e):
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"CompilationError", "PTXASError", "CompileTimeAssertionFailure"})


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _cpu_cache_bytes():
    """The last-level cache, from sysfs; None where it does not say."""
    best_level, best = -1, None
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return None
    for entry in entries:
        if not entry.startswith("index"):
            continue
        level = (_read_text(os.path.join(base, entry, "level")) or "").strip()
        size = (_read_text(os.path.join(base, entry, "size")) or "").strip()
        kind = (_read_text(os.path.join(base, entry, "type")) or "").strip()
        m = re.match(r"(\d+)([KMG]?)$", size)
        if not level.isdigit() or not m or kind == "Instruction":
            continue
        scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
        if int(level) > best_level:
            best_level, best = int(level), int(m.group(1)) * scale
    return best


class _CudaDriver:
    """The CUDA driver API through ctypes: attributes PyTorch does not expose (default SM clock,
    memory clock, bus width) and the UUID. Every call may fail; failures give None."""

    CLOCK_RATE = 13
    MULTIPROCESSOR_COUNT = 16
    MEMORY_CLOCK_RATE = 36
    GLOBAL_MEMORY_BUS_WIDTH = 37
    L2_CACHE_SIZE = 38
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97

    def __init__(self, ordinal):
        self.lib = None
        self.device = None
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            if lib.cuInit(0) != 0:
                return
            dev = ctypes.c_int()
            if lib.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
                return
            self.lib, self.device = lib, dev.value
        except (OSError, AttributeError):
            pass

    def attr(self, attribute):
        if self.lib is None:
            return None
        value = ctypes.c_int()
        try:
            if self.lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, self.device) != 0:
                return None
        except AttributeError:
            return None
        return value.value

    def uuid(self):
        if self.lib is None:
            return None
        raw = (ctypes.c_ubyte * 16)()
        for fn_name in ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"):
            fn = getattr(self.lib, fn_name, None)
            if fn is not None and fn(raw, self.device) == 0:
                h = bytes(raw).hex()
                return "GPU-%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
        return None

    def driver_api_version(self):
        if self.lib is None:
            return None
        v = ctypes.c_int()
        if self.lib.cuDriverGetVersion(ctypes.byref(v)) != 0:
            return None
        return "%d.%d" % (v.value // 1000, v.value % 1000 // 10)


def _nvml_handle(uuid):
    """pynvml and the device's handle, where nvidia-ml-py is installed."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml, handle
    except Exception:
        return None, None


def _clock_probe_kernel(out_ptr, slots):
    # Every program writes the %globaltimer (ns) and clock64 (cycles) of the SM it runs on into
    # that SM's slot. Jitted by _TritonClockProbe; `tl` is this module's global, set on import.
    smid = tl.inline_asm_elementwise(asm="mov.u32 $0, %smid;", constraints="=r", args=[],
                                     dtype=tl.int32, is_pure=False, pack=1)
    ns = tl.inline_asm_elementwise(asm="mov.u64 $0, %globaltimer;", constraints="=l", args=[],
                                   dtype=tl.int64, is_pure=False, pack=1)
    clk = tl.inline_asm_elementwise(asm="mov.u64 $0, %clock64;", constraints="=l", args=[],
                                    dtype=tl.int64, is_pure=False, pack=1)
    ok = smid < slots
    tl.store(out_ptr + smid * 2, ns, mask=ok)
    tl.store(out_ptr + smid * 2 + 1, clk, mask=ok)


class _TritonClockProbe:
    """The SM clock during a trial, as NVBench measures it: before and after the trial one tiny
    program per SM reads clock64 and %globaltimer; each SM seen both times gives
    cycles / nanoseconds, and the median over SMs is the trial's clock. It is the average clock
    over the whole trial, not a sample."""

    SLOTS = 1024
    description = ("clock64 against %globaltimer, read on every SM by a Triton probe before and after "
                   "each trial (median over SMs): the trial's average SM clock")

    def __init__(self, torch, multiprocessors):
        global tl
        import triton
        import triton.language
        tl = triton.language
        self.torch = torch
        self.kernel = triton.jit(_clock_probe_kernel)
        self.programs = max(1, multiprocessors)
        self.before_buf = torch.zeros(self.SLOTS * 2, dtype=torch.int64, device="cuda")
        self.after_buf = torch.zeros_like(self.before_buf)
        # One trial's worth now: it compiles the probe, and a probe that cannot work fails here.
        self.before()
        self.after()
        torch.cuda.synchronize()
        if self.mhz() is None:
            raise RuntimeError("the probe saw no SM twice")

    def before(self):
        self.before_buf.zero_()
        self.after_buf.zero_()
        self.kernel[(self.programs,)](self.before_buf, self.SLOTS, num_warps=1)

    def after(self):
        self.kernel[(self.programs,)](self.after_buf, self.SLOTS, num_warps=1)

    def mhz(self):
        before = self.before_buf.view(-1, 2).tolist()
        after = self.after_buf.view(-1, 2).tolist()
        ratios = []
        for (ns0, clk0), (ns1, clk1) in zip(before, after):
            if ns0 > 0 and ns1 > ns0 and clk1 > clk0:
                ratios.append((clk1 - clk0) / (ns1 - ns0) * 1000.0)
        if not ratios:
            return None
        mhz = statistics.median(ratios)
        return mhz if 10.0 <= mhz <= 10000.0 else None


class _NvmlClock:
    description = "NVML's current SM clock, read once while each trial runs (a sample, not an average)"

    def __init__(self, pynvml, handle):
        self.pynvml, self.handle = pynvml, handle
        self.reading = None
        pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)

    def before(self):
        self.reading = None

    def after(self):
        try:
            self.reading = float(self.pynvml.nvmlDeviceGetClockInfo(self.handle, self.pynvml.NVML_CLOCK_SM))
        except Exception:
            self.reading = None

    def mhz(self):
        return self.reading if self.reading and self.reading > 0 else None


class _Device:
    """Where the callables run: "cuda" (PyTorch with a CUDA device) or "cpu"; what the header
    says about it; the clock source."""

    def __init__(self, backend):
        self.torch = None
        self.kind = "cpu"
        self.reason = ""
        self.header = {}
        self.software = {"python": platform.python_version(), "kit": "%s %d" % (KIT_NAME, KIT_VERSION)}
        self.cache_bytes = None
        self.multiprocessors = None
        self.default_clock_mhz = None
        self.clock = None
        self.clock_note = "none: no GPU"
        self.torch_device = None

        # A bench that never imported PyTorch has no GPU code the kit could time: it runs on the
        # CPU under the wall clock (and a CPU bench does not pay for importing PyTorch).
        torch = sys.modules.get("torch")
        why_not = None
        if torch is None:
            if backend == "cuda":
                torch, why_not = self._import_torch()
            else:
                why_not = "the bench does not use PyTorch (the kit times GPU code with PyTorch's CUDA events)"
        if torch is not None:
            self.software["torch"] = str(getattr(torch, "__version__", "unknown"))
            if getattr(getattr(torch, "version", None), "cuda", None):
                self.software["cuda"] = str(torch.version.cuda)
        triton = sys.modules.get("triton")
        if triton is not None:
            self.software["triton"] = str(getattr(triton, "__version__", "unknown"))
        for module in ("numpy", "pynvml"):
            if module in sys.modules and hasattr(sys.modules[module], "__version__"):
                self.software[module] = str(sys.modules[module].__version__)

        if backend == "cpu":
            self.reason = "the plan asks for the CPU backend"
            self._probe_cpu()
            return
        if torch is not None and why_not is None:
            try:
                if torch.cuda.is_available() and torch.cuda.device_count() > 0:
                    self.torch = torch
                    self.kind = "cuda"
                    self.reason = ("the plan asks for the CUDA backend" if backend == "cuda"
                                   else "a CUDA device is present")
                    self._probe_cuda()
                    return
                why_not = "torch.cuda.is_available() is False"
            except Exception as e:
                why_not = "torch.cuda failed: " + _exception_text(e)
        if backend == "cuda":
            raise _Fail(EXIT_FAILED, "backend", "backend: the plan asks for cuda, but there is no usable CUDA device: " + why_not)
        self.reason = "no usable CUDA device: " + why_not
        self._probe_cpu()

    @staticmethod
    def _import_torch():
        try:
            import torch
            return torch, None
        except ImportError:
            return None, "PyTorch is not installed (the kit times GPU code with PyTorch's CUDA events)"
        except Exception as e:
            return None, "importing PyTorch failed: " + _exception_text(e)

    def _probe_cpu(self):
        name = None
        for line in (_read_text("/proc/cpuinfo") or "").splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
        name = name or platform.processor() or platform.machine() or "unknown CPU"
        try:
            threads = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            threads = os.cpu_count() or 1
        llc = _cpu_cache_bytes()
        self.cache_bytes = llc or 32 << 20
        self.multiprocessors = threads
        extra = {"machine": platform.machine(), "system": platform.platform()}
        extra["last_level_cache_bytes"] = str(llc) if llc else "unknown (32 MiB assumed)"
        self.header = {"name": name, "multiprocessors": threads, "extra": extra}

    def _probe_cuda(self):
        torch = self.torch
        index = torch.cuda.current_device()
        self.torch_device = torch.device("cuda", index)
        props = torch.cuda.get_device_properties(index)
        drv = _CudaDriver(index)
        self.multiprocessors = int(props.multi_processor_count)
        d = {"name": str(props.name), "multiprocessors": self.multiprocessors,
             "compute_capability": "%d.%d" % (props.major, props.minor),
             "global_mem_bytes": int(props.total_memory)}
        l2 = drv.attr(_CudaDriver.L2_CACHE_SIZE) or getattr(props, "L2_cache_size", None)
        if l2:
            d["l2_bytes"] = int(l2)
        self.cache_bytes = int(l2) if l2 else 50 << 20
        smem = drv.attr(_CudaDriver.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        if smem:
            d["smem_per_block_optin_bytes"] = smem
        clock_khz = drv.attr(_CudaDriver.CLOCK_RATE)
        mem_khz = drv.attr(_CudaDriver.MEMORY_CLOCK_RATE)
        bus = drv.attr(_CudaDriver.GLOBAL_MEMORY_BUS_WIDTH)
        if mem_khz:
            d["mem_clock_mhz"] = mem_khz / 1000.0
        if bus:
            d["mem_bus_width_bits"] = bus
        uuid = drv.uuid()
        if uuid:
            d["uuid"] = uuid
        pynvml, handle = _nvml_handle(uuid)
        extra = {}
        if clock_khz:
            self.default_clock_mhz = clock_khz / 1000.0
            extra["default_sm_clock_source"] = "CU_DEVICE_ATTRIBUTE_CLOCK_RATE"
        elif pynvml is not None:
            try:
                self.default_clock_mhz = float(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM))
                extra["default_sm_clock_source"] = "NVML max SM clock"
            except Exception:
                pass
        if self.default_clock_mhz:
            d["sm_clock_mhz"] = self.default_clock_mhz
        driver = None
        m = re.search(r"Kernel Module\s+([0-9][0-9.]*)", _read_text("/proc/driver/nvidia/version") or "")
        if m:
            driver = m.group(1)
        elif pynvml is not None:
            try:
                driver = pynvml.nvmlSystemGetDriverVersion()
                driver = driver.decode() if isinstance(driver, bytes) else str(driver)
            except Exception:
                driver = None
        api = drv.driver_api_version()
        if driver:
            d["driver_version"] = driver + (" (CUDA %s)" % api if api else "")
        elif api:
            d["driver_version"] = "CUDA driver API " + api
        if getattr(torch.version, "cuda", None):
            d["runtime_version"] = str(torch.version.cuda)

        # The clock source: the Triton probe, else NVML, else none.
        why = []
        try:
            self.clock = _TritonClockProbe(torch, self.multiprocessors)
            self.clock_note = _TritonClockProbe.description
        except Exception as e:
            why.append("Triton probe: " + _exception_text(e, 200))
            if pynvml is not None:
                try:
                    self.clock = _NvmlClock(pynvml, handle)
                    self.clock_note = _NvmlClock.description
                except Exception as e2:
                    why.append("NVML: " + _exception_text(e2, 200))
            else:
                why.append("NVML: pynvml is not installed")
        if self.clock is None:
            self.clock_note = "none (" + "; ".join(why) + "): clock_mhz is null"
        extra["clock_source"] = self.clock_note
        d["extra"] = extra
        self.header = d

    def synchronize(self):
        if self.kind == "cuda":
            self.torch.cuda.synchronize()

    def alive(self):
        """False when the CUDA context is broken (an illegal address, a launch failure): nothing
        more can run in this process."""
        if self.kind != "cuda":
            return True
        try:
            self.torch.cuda.synchronize()
            return True
        except Exception:
            return False

    def release(self):
        if self.kind == "cuda":
            try:
                self.torch.cuda.empty_cache()
            except Exception:
                pass


# ============================================================================ timing

class _Timing:
    """How one variant x point is timed: calls per trial, how they are launched, and where the
    rotation over input sets stands. Prepared before its first trial (warm-up and calibration)."""

    def __init__(self):
        self.mode = None        # "cuda_graph", "launches", "launches_flushed", "wall_clock", "wall_clock_flushed"
        self.steps = 0          # calls in one batch (one graph, or one loop)
        self.replays = 1        # graph replays per trial
        self.graph = None
        self.cursor = 0
        self.note = ""
        self.cpu_us = None      # the process's CPU time of the last batch (CPU only)


class _Timer:
    """Trials on one device. time_trial returns (microseconds per call, calls, clock MHz or None)."""

    MAX_GRAPH_STEPS = 4096

    def __init__(self, device, plan, cold):
        self.device = device
        self.torch = device.torch
        self.min_trial_ms = plan.min_trial_ms
        self.warmup_ms = plan.warmup_ms
        self.cold = cold
        self.flush_buf = None
        if cold == "flush":
            n = max(2 * (device.cache_bytes or (32 << 20)), 1 << 20)
            if device.kind == "cuda":
                self.flush_buf = self.torch.empty(n // 4, dtype=self.torch.int32, device=device.torch_device)
            else:
                self.flush_buf = bytearray(n)
                self.flush_zeros = bytes(len(range(0, n, 64)))

    def describe(self):
        if self.device.kind == "cuda":
            how = ("CUDA events around a CUDA graph of many calls where the calls capture, plain launches "
                   "where they do not (each check line's detail.timing says which)")
            if self.cold == "flush":
                how = "CUDA events around each call, the L2 flushed before it (a %d-byte write)" % (4 * self.flush_buf.numel())
        else:
            how = "no GPU (%s): time.perf_counter_ns around a batch of calls" % self.device.reason
            if self.cold == "flush":
                how = "no GPU (%s): time.perf_counter_ns around each call, the cache flushed before it" % self.device.reason
        return "%s; a trial lasts at least %g ms after a %g ms warm-up" % (how, self.min_trial_ms, self.warmup_ms)

    # -- CPU ---------------------------------------------------------------------------------

    def _flush_cpu(self):
        self.flush_buf[::64] = self.flush_zeros

    def _wall_batch(self, call, sets, state, steps):
        """Microseconds of wall clock; the process's CPU time of the same calls in state.cpu_us."""
        n = len(sets)
        if self.cold == "flush":
            total = cpu = 0
            for _ in range(steps):
                self._flush_cpu()
                c0 = time.process_time_ns()
                t0 = time.perf_counter_ns()
                call(sets[state.cursor % n])
                total += time.perf_counter_ns() - t0
                cpu += time.process_time_ns() - c0
                state.cursor += 1
            state.cpu_us = cpu / 1e3
            return total / 1e3
        c0 = time.process_time_ns()
        t0 = time.perf_counter_ns()
        for _ in range(steps):
            call(sets[state.cursor % n])
            state.cursor += 1
        wall = time.perf_counter_ns() - t0
        state.cpu_us = (time.process_time_ns() - c0) / 1e3
        return wall / 1e3

    # -- GPU ---------------------------------------------------------------------------------

    def _events(self):
        return self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)

    def _launch_batch(self, call, sets, state, steps):
        """Plain launches between two events; microseconds."""
        n = len(sets)
        if self.cold == "flush":
            total_ms = 0.0
            pairs = []
            for _ in range(steps):
                self.flush_buf.zero_()
                start, end = self._events()
                start.record()
                call(sets[state.cursor % n])
                end.record()
                pairs.append((start, end))
                state.cursor += 1
            self.torch.cuda.synchronize()
            for start, end in pairs:
                total_ms += start.elapsed_time(end)
            return total_ms * 1e3
        start, end = self._events()
        start.record()
        for _ in range(steps):
            call(sets[state.cursor % n])
            state.cursor += 1
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3

    def _capture(self, call, sets, steps):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            call(sets[0])
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(steps):
                call(sets[i % len(sets)])
        return graph

    def _replay_us(self, state):
        start, end = self._events()
        start.record()
        for _ in range(state.replays):
            state.graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3

    # -- both ----------------------------------------------------------------------------------

    def prepare(self, call, sets, log):
        """Warm-up, then the calls per trial. Raises what the user's call raises."""
        state = _Timing()
        n = len(sets)
        cuda = self.device.kind == "cuda"
        batch = self._launch_batch if cuda else self._wall_batch
        # Warm-up: batches of plain calls until warmup_ms has passed (at least two batches: the
        # first may pay for lazy initialisation). The fastest batch after the first estimates a
        # call's time: an estimate too low makes a trial longer than min_trial_ms, never shorter.
        block = max(n, 4 if cuda else 1)
        batches, per_call_us = 0, None
        deadline = time.perf_counter() + max(self.warmup_ms, 0) / 1e3
        while batches < 2 or time.perf_counter() < deadline:
            us = batch(call, sets, state, block)
            batches += 1
            if batches >= 2:
                estimate = max(us / block, 1e-3)
                per_call_us = estimate if per_call_us is None else min(per_call_us, estimate)
            if not cuda and us < 1000 and block < 1 << 20:
                block *= 2  # tiny CPU calls: batches long enough to estimate
        steps = max(1, int(math.ceil(self.min_trial_ms * 1e3 / per_call_us)))
        if cuda and self.cold != "flush":
            steps = min(max(steps, n), self.MAX_GRAPH_STEPS)
            try:
                state.graph = self._capture(call, sets, steps)
                state.steps = steps
                state.mode = "cuda_graph"
                one = self._replay_us(state)
                state.replays = max(1, int(math.ceil(self.min_trial_ms * 1e3 / max(one, 1e-3))))
                state.note = "a CUDA graph of %d calls, replayed %d times a trial" % (steps, state.replays)
                return state
            except Exception as e:
                state.graph = None
                if not self.device.alive():
                    raise
                log("CUDA graph capture failed (%s); timing plain launches" % _exception_text(e, 300))
                state.note = "plain launches (the calls do not capture in a CUDA graph: %s)" % _exception_text(e, 200)
            state.mode = "launches"
            state.steps = max(steps, n)
            state.cursor = 0
            return state
        state.mode = ("launches_flushed" if cuda else "wall_clock_flushed") if self.cold == "flush" else \
            ("launches" if cuda else "wall_clock")
        state.steps = max(steps, n) if self.cold != "flush" else steps
        state.note = "%d calls a trial%s" % (state.steps, ", each after a cache flush" if self.cold == "flush" else "")
        return state

    def time_trial(self, call, sets, state):
        """A dict: us (per call), calls, mhz (or None), cpu_us (per call; on the CPU only)."""
        clock = self.device.clock
        if self.device.kind != "cuda":
            us = self._wall_batch(call, sets, state, state.steps)
            steps = state.steps
            # Keep later trials at least min_trial_ms long when the estimate was short.
            if us < 0.8 * self.min_trial_ms * 1e3:
                state.steps = int(math.ceil(state.steps * self.min_trial_ms * 1e3 / max(us, 1.0) * 1.1))
            return {"us": us / steps, "calls": steps, "mhz": None, "cpu_us": state.cpu_us / steps}
        if clock is not None:
            clock.before()
        if state.graph is not None:
            start, end = self._events()
            start.record()
            for _ in range(state.replays):
                state.graph.replay()
            end.record()
            if clock is not None:
                clock.after()
            end.synchronize()
            self.torch.cuda.synchronize()
            us = start.elapsed_time(end) * 1e3
            calls = state.steps * state.replays
        else:
            if self.cold == "flush":  # each call alone between events, after a flush
                us = self._launch_batch(call, sets, state, state.steps)
                if clock is not None:
                    clock.after()
            else:
                # Events around plain launches: the clock probe goes after the end event.
                n = len(sets)
                start, end = self._events()
                start.record()
                for _ in range(state.steps):
                    call(sets[state.cursor % n])
                    state.cursor += 1
                end.record()
                if clock is not None:
                    clock.after()
                end.synchronize()
                us = start.elapsed_time(end) * 1e3
            self.torch.cuda.synchronize()
            calls = state.steps
        mhz = clock.mhz() if clock is not None else None
        return {"us": us / calls, "calls": calls, "mhz": mhz, "cpu_us": None}


# ============================================================================ the bench

def _hash_sources(paths):
    h = hashlib.sha256()
    names = []
    for label, path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        h.update(label.encode() + b"\0" + hashlib.sha256(data).digest())
        names.append(label)
    return h.hexdigest(), names


class _Cell:
    """One variant x point in this run."""

    def __init__(self):
        self.checked = False
        self.status = None      # "ok", "incorrect", "infeasible"
        self.reason = ""
        self.call = None
        self.timing = None
        self.trials = 0


class _Bench:
    def __init__(self, build, options):
        if not callable(build):
            raise TypeError("main(build, ...): build must be a function (params, axes, ctx) -> callable")
        known = {"inputs", "reference", "compare", "tolerance", "work", "describe", "name", "version",
                 "sources", "cold", "min_sets", "max_sets"}
        unknown = set(options) - known
        if unknown:
            raise TypeError("main(): unknown options %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(sorted(known))))
        self.build = build
        self.inputs_fn = options.get("inputs")
        self.reference_fn = options.get("reference")
        self.compare_fn = options.get("compare") or compare_outputs
        self.default_tolerance = dict(options.get("tolerance") or {})
        self.work_fn = options.get("work")
        self.describe_fn = options.get("describe")
        self.cold = options.get("cold", "rotate")
        if self.cold not in ("rotate", "flush"):
            raise ValueError('main(): cold must be "rotate" or "flush"')
        self.min_sets = int(options.get("min_sets", 2))
        self.max_sets = int(options.get("max_sets", 64))
        if not 1 <= self.min_sets <= self.max_sets:
            raise ValueError("main(): need 1 <= min_sets <= max_sets")
        main_module = sys.modules.get("__main__")
        self.script = os.path.abspath(getattr(main_module, "__file__", None) or sys.argv[0] or KIT_NAME)
        script_name = os.path.basename(self.script)
        self.name = options.get("name") or script_name
        self.version = str(options.get("version", "1"))
        self.sources = list(options.get("sources") or ())

    # -- provenance ------------------------------------------------------------------------------

    def build_info(self):
        """The build id: sha256 over the bench script, every module loaded from its folder (or
        below), the kit, and the files named in sources=."""
        root = os.path.dirname(self.script)

        def label(path):  # the same for every checkout of the same sources
            rel = os.path.relpath(path, root)
            return os.path.basename(path) if rel.startswith("..") else rel

        files = {label(self.script): self.script}
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if not path or not path.endswith(".py"):
                continue
            path = os.path.abspath(path)
            if path.startswith(root + os.sep) and "site-packages" not in path:
                files[label(path)] = path
        kit_path = os.path.abspath(__file__)
        files.setdefault(label(kit_path), kit_path)
        for s in self.sources:
            path = os.path.abspath(os.path.join(root, s))
            files[label(path)] = path
        digest, names = _hash_sources(sorted(files.items()))
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return {"id": "sha256:%s (%s)" % (digest[:16], shown), "binary_hash": "sha256:" + digest}

    # -- the run ---------------------------------------------------------------------------------

    def serve(self, out):
        self.out = out
        started = time.perf_counter()
        try:
            self._serve(out)
        except _Fail as f:
            return self._fail(out, f)
        except BrokenPipeError:
            return EXIT_FAILED
        except Exception as e:  # the kit's bug, or user code outside any cell (work, inputs hooks)
            traceback.print_exc(file=sys.stderr)
            return self._fail(out, _Fail(EXIT_FAILED, "bench", "the bench failed: " + _exception_text(e)))
        out.write({"kind": "footer", "trials": out.trials, "wall_s": round(time.perf_counter() - started, 6)})
        return EXIT_OK

    def _fail(self, out, f):
        Context.log(f.message)
        try:
            out.write({"kind": "error", "where": f.where, "message": f.message})
        except (BrokenPipeError, OSError):
            pass
        return f.code

    def _lines(self):
        """(line number, parsed JSON) of each non-blank stdin line."""
        number = 0
        stdin = sys.stdin.buffer
        while True:
            raw = stdin.readline()
            if not raw:
                return
            number += 1
            where = "plan" if number == 1 else "line %d" % number
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _bad(where, "not UTF-8")
            if not text.strip():
                continue
            try:
                doc = json.loads(text)
            except ValueError as e:
                raise _bad(where, "not JSON: %s" % e)
            yield number, doc

    def _serve(self, out):
        lines = self._lines()
        first = next(lines, None)
        if first is None:
            raise _bad("stdin", "no plan: stdin closed before the first line")
        plan = _Plan(first[1])
        self.plan = plan
        tolerance = dict(self.default_tolerance)
        if "tolerance" in plan.params:
            given = plan.params["tolerance"]
            if not isinstance(given, dict):
                raise _bad("params.tolerance", "must be an object: error name -> bound")
            for key, value in given.items():
                if not _is_number(value) or value < 0:
                    raise _bad("params.tolerance." + key, "must be a number >= 0")
                tolerance[key] = value
        if self.reference_fn is not None and not tolerance:
            raise _bad("params.tolerance", "the bench checks against a reference, but no tolerance is given "
                       "(the manifest's bench.params.tolerance, or the bench's own defaults)")
        self.tolerance = tolerance
        self.work = self._work_of_points(plan)

        device = _Device(plan.backend)
        self.device = device
        if plan.judged in _CPU_TIME_METRICS and device.kind != "cpu":
            raise _bad("judged_metric", '"%s" is measured on the CPU backend only (this run is on %s)'
                       % (plan.judged, device.kind))
        seed = plan.seed or self._fresh_seed()
        self.ctx = Context(device.kind, device.torch_device, seed, plan.params, device.cache_bytes,
                           device.multiprocessors)
        self.timer = _Timer(device, plan, self.cold)
        build_info = self.build_info()
        header = {"kind": "header", "schema_version": PROTOCOL_VERSION,
                  "bench": "%s %s (%s %d)" % (self.name, self.version, KIT_NAME, KIT_VERSION),
                  "backend": device.kind, "backend_reason": device.reason,
                  "timer": "cuda_events" if device.kind == "cuda" else "wall_clock",
                  "timer_note": self.timer.describe(), "seed": seed,
                  "device": device.header, "build": build_info, "software": device.software}
        out.write(header)

        self.variants = {}
        for name, params in plan.variants:
            out.write(self._variant_line(name, params))
        self.points = dict(plan.points)
        self.cells = {}
        self.resident = None  # (point id, Inputs or None, failure reason, reference cache)

        for number, doc in lines:
            variant, point, trials = _parse_measure(doc, "line %d" % number)
            self._measure(variant, point, trials)

    @staticmethod
    def _fresh_seed():
        # Within 2^53 so every JSON reader keeps it exact; never 0.
        return (int.from_bytes(os.urandom(8), "little") >> 11) | 1

    def _work_of_points(self, plan):
        """work(axes) of every point, and a check that every declared metric can be computed:
        the judged one everywhere (else the plan is refused), the others where they can."""
        work = {}
        for pid, axes in plan.points:
            w = {}
            if self.work_fn is not None:
                try:
                    w = self.work_fn(dict(axes)) or {}
                except Exception as e:
                    traceback.print_exc(file=sys.stderr)
                    raise _Fail(EXIT_FAILED, "points", "work(axes) raised for point %s: %s" % (pid, _exception_text(e)))
                if not isinstance(w, dict):
                    raise _Fail(EXIT_FAILED, "points", "work(axes) must return a dict (point %s)" % pid)
            work[pid] = w
        for metric in plan.metrics:
            if metric in _TIME_METRICS or metric in _CPU_TIME_METRICS:
                continue
            if not metric.endswith("_per_s"):
                if metric == plan.judged:
                    raise _bad("judged_metric", '"%s": this bench computes time_us, time_ns, time_ms, time_s, '
                               'cpu_time_us, cpu_time_ms and X_per_s from its work(axes) counts; "%s" is none '
                               'of them' % (metric, metric))
                Context.log('metric %s is declared but the kit cannot compute it; trials leave it out' % metric)
                continue
            key = metric[:-len("_per_s")]
            missing = [pid for pid, w in work.items() if not (_is_number(w.get(key)) and w.get(key) > 0)]
            if missing and metric == plan.judged:
                raise _bad("judged_metric", '"%s" needs work(axes)["%s"] > 0, which the bench does not give '
                           'for point %s' % (metric, key, missing[0]))
            if missing:
                Context.log('metric %s: no work "%s" for point(s) %s; trials there leave it out'
                            % (metric, key, ", ".join(missing)))
        return work

    def _variant_line(self, name, params):
        line = {"kind": "variant", "variant": name, "params": params, "status": "ok"}
        reason = None
        if self.describe_fn is not None:
            try:
                info = self.describe_fn(dict(params), self.ctx) or {}
                if info.get("resources"):
                    line["resources"] = dict(info["resources"])
                if info.get("ignored_params"):
                    line["ignored_params"] = [str(p) for p in info["ignored_params"]]
                if info.get("kernels"):
                    line["kernels"] = list(info["kernels"])
            except Infeasible as e:
                reason = str(e) or "infeasible"
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                reason = "describe() raised " + _exception_text(e)
                self._require_alive("describe() of variant " + name)
        if reason is not None:
            line["status"] = "infeasible"
            line["reason"] = reason
        self.variants[name] = (params, reason)
        return line

    def _require_alive(self, what):
        if not self.device.alive():
            raise _Fail(EXIT_FAILED, "device", "the CUDA context is broken after %s; nothing more can run "
                        "in this process" % what)

    # -- one request ------------------------------------------------------------------------------

    def _measure(self, variant, point, trials):
        out = self.out
        if variant not in self.variants or point not in self.points:
            reason = ('the plan has no variant named "%s"' % variant if variant not in self.variants
                      else 'the plan has no point with id "%s"' % point)
            out.write({"kind": "skipped", "variant": variant, "point": point, "status": "unknown", "reason": reason})
            return
        cell = self.cells.setdefault((variant, point), _Cell())
        if not cell.checked:
            out.write(self._check(variant, point, cell))
            cell.checked = True
        if cell.status == "ok" and (self.resident is None or self.resident[0] != point):
            self._make_resident(point)  # the runner came back to an earlier point
            if self.resident[1] is None:
                cell.status, cell.reason = "infeasible", self.resident[2]
        if cell.status != "ok":
            reason = "failed the check: " + cell.reason if cell.status == "incorrect" else cell.reason
            out.write({"kind": "skipped", "variant": variant, "point": point, "status": cell.status, "reason": reason})
            return
        inputs = self.resident[1]
        call = cell.call
        sets = inputs.sets if self.inputs_fn is not None else [None]
        try:
            if cell.timing is None:
                cell.timing = self.timer.prepare(call, sets, Context.log)
            for _ in range(trials):
                timed = self.timer.time_trial(call, sets, cell.timing)
                cell.trials += 1
                out.write(self._trial_line(variant, point, cell.trials, timed))
        except (_Fail, BrokenPipeError):
            raise
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("timing %s at %s" % (variant, point))
            cell.status = "infeasible" if _is_resource_error(e) or isinstance(e, Infeasible) else "incorrect"
            cell.reason = "raised while timed: " + _exception_text(e)
            cell.timing = None
            out.write({"kind": "skipped", "variant": variant, "point": point, "status": cell.status,
                       "reason": ("failed the check: " if cell.status == "incorrect" else "") + cell.reason})

    def _trial_line(self, variant, point, number, timed):
        us, calls, mhz = timed["us"], timed["calls"], timed["mhz"]
        metrics = {}
        work = self.work[point]
        for metric in self.plan.metrics:
            value = None
            if metric in _TIME_METRICS:
                value = us * _TIME_METRICS[metric]
            elif metric in _CPU_TIME_METRICS:
                if timed["cpu_us"] is not None:
                    value = timed["cpu_us"] * _CPU_TIME_METRICS[metric]
            elif metric.endswith("_per_s"):
                count = work.get(metric[:-len("_per_s")])
                if _is_number(count) and count > 0:
                    value = count / (us * 1e-6)
            if value is not None and math.isfinite(value) and value > 0:
                metrics[metric] = value
        if self.plan.judged not in metrics:
            raise _Fail(EXIT_FAILED, "trial", "%s at %s: the judged metric %s could not be computed (time per call %r us)"
                        % (variant, point, self.plan.judged, us))
        line = {"kind": "trial", "variant": variant, "point": point, "trial": number, "metrics": metrics,
                "steps": int(calls), "clock_mhz": mhz}
        if mhz is not None and self.device.default_clock_mhz:
            line["throttled"] = mhz < 0.75 * self.device.default_clock_mhz
        return line

    # -- the point's inputs ---------------------------------------------------------------------------

    def _input_sets_for(self, point):
        if self.cold == "flush":
            return 1, "the cache is flushed before each call"
        per_call = self.work[point].get("bytes")
        cache = self.device.cache_bytes
        if not (_is_number(per_call) and per_call > 0):
            return self.min_sets, "%d sets (the bench gives no work \"bytes\" per call to size the rotation)" % self.min_sets
        sets = int(math.ceil(2.0 * cache / per_call))
        sets = max(self.min_sets, min(self.max_sets, sets))
        return sets, "%d sets of %.4g MB a call: one rotation reads %.3g x the %s of %.4g MB" % (
            sets, per_call / 1e6, sets * per_call / cache, "L2" if self.device.kind == "cuda" else "last-level cache",
            cache / 1e6)

    def _make_resident(self, point):
        """The point's inputs in memory (the previous point's freed first)."""
        if self.resident is not None and self.resident[0] == point:
            return
        for cell in self.cells.values():  # CUDA graphs hold the old inputs' addresses: they go
            cell.timing = None
        self.resident = None
        self.device.release()
        axes = dict(self.points[point])
        self.ctx.point = point
        sets, note = self._input_sets_for(point)
        if self.inputs_fn is None:
            self.resident = (point, Inputs([None]), "", {}, {"input_sets": "none: the callables take no inputs"})
            return
        started = time.perf_counter()
        try:
            inputs = self.inputs_fn(axes, sets, self.ctx)
            if not isinstance(inputs, Inputs):
                inputs = Inputs(inputs)
            self.device.synchronize()
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("inputs() of point " + point)
            why = "the inputs cannot be prepared: " + _exception_text(e)
            Context.log("point %s: %s" % (point, why))
            self.resident = (point, None, why, {}, {})
            return
        detail = {"input_sets": len(inputs.sets), "rotation": note}
        if len(inputs.sets) != sets and self.cold != "flush":
            detail["rotation"] = "%s; asked for %d, the bench made %d" % (note, sets, len(inputs.sets))
        detail.update(inputs.detail)
        Context.log("point %s: inputs prepared in %.3f s (%s)" % (point, time.perf_counter() - started, detail["rotation"]))
        self.resident = (point, inputs, "", {}, detail)

    def _reference(self, point, check_inputs):
        cache = self.resident[3]
        if "value" not in cache and "error" not in cache:
            started = time.perf_counter()
            try:
                cache["value"] = self.reference_fn(dict(self.points[point]), check_inputs, self.ctx)
                self.device.synchronize()
                Context.log("point %s: reference in %.3f s" % (point, time.perf_counter() - started))
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                self._require_alive("reference() of point " + point)
                cache["error"] = "the reference cannot be computed: " + _exception_text(e)
        if "error" in cache:
            raise Infeasible(cache["error"])
        return cache["value"]

    # -- the correctness gate -------------------------------------------------------------------------

    def _check(self, variant, point, cell):
        line = {"kind": "check", "variant": variant, "point": point}
        params, variant_reason = self.variants[variant]

        def verdict(status, reason=None, **fields):
            cell.status, cell.reason = status, reason or ""
            line["status"] = status
            if reason:
                line["reason"] = reason
            line.update(fields)
            return line

        if variant_reason is not None:
            return verdict("infeasible", "the variant cannot run here: " + variant_reason)
        self._make_resident(point)
        if self.resident[1] is None:
            return verdict("infeasible", self.resident[2])
        inputs = self.resident[1]
        detail = dict(self.resident[4])
        axes = dict(self.points[point])
        self.ctx.point = point

        # Build: anything it raises means the variant cannot run at this point.
        try:
            built = self.build(dict(params), axes, self.ctx)
            if isinstance(built, Case):
                call, detail_of = built.run, built.detail
            elif callable(built):
                call, detail_of = built, None
            else:
                raise TypeError("build() returned %s, not a callable or a Case" % type(built).__name__)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("build() of %s at %s" % (variant, point))
            why = str(e) if isinstance(e, Infeasible) else "build raised " + _exception_text(e)
            return verdict("infeasible", why, detail=detail)
        if self.inputs_fn is None:
            bare = call
            call = lambda _inputs: bare()  # noqa: E731 - the callables take no inputs
        cell.call = call

        # The call on the check inputs: what it raises decides between infeasible and incorrect.
        started = time.perf_counter()
        try:
            output = call(inputs.check)
            self.device.synchronize()
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("the check call of %s at %s" % (variant, point))
            cell.call = None
            if isinstance(e, Infeasible):
                return verdict("infeasible", str(e) or "infeasible", detail=detail)
            if _is_resource_error(e):
                return verdict("infeasible", "out of resources: " + _exception_text(e), detail=detail)
            if _is_compile_error(e):
                return verdict("infeasible", "does not compile: " + _exception_text(e), detail=detail)
            return verdict("incorrect", "raised " + _exception_text(e), detail=detail)
        if detail_of is not None:
            try:
                extra = detail_of() if callable(detail_of) else detail_of
                detail.update(extra or {})
            except Exception as e:
                detail["detail_error"] = _exception_text(e, 200)

        if self.reference_fn is None:
            detail["reference"] = "none: the bench gives no reference, so only that the call runs was checked"
            return self._ready(cell, verdict("ok", detail=detail), verdict)
        try:
            expected = self._reference(point, inputs.check)
        except Infeasible as e:
            cell.call = None
            return verdict("infeasible", str(e), detail=detail)

        errors = {}
        try:
            errors = self.compare_fn(output, expected, self.ctx)
            if not isinstance(errors, dict):
                raise TypeError("compare() returned %s, not a dict of errors" % type(errors).__name__)
        except Incorrect as e:
            cell.call = None
            return verdict("incorrect", e.reason, errors=_json_errors(e.errors), tolerance=dict(self.tolerance),
                           detail=detail)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("compare() of %s at %s" % (variant, point))
            cell.call = None
            return verdict("incorrect", "compare raised " + _exception_text(e), detail=detail)
        Context.log("%s at %s: check in %.3f s: %s" % (variant, point, time.perf_counter() - started,
                                                       ", ".join("%s %.3g" % kv for kv in _numeric_items(errors))))
        for name in self.tolerance:
            if name not in errors:
                raise _Fail(EXIT_FAILED, "params.tolerance." + name,
                            'params.tolerance.%s: compare() returns no error named "%s" (it returns: %s)'
                            % (name, name, ", ".join(sorted(errors)) or "nothing"))
        problems = []
        for name, bound in self.tolerance.items():
            value = errors[name]
            if not _is_number(value):
                problems.append("%s is %s" % (name, "NaN" if isinstance(value, float) and math.isnan(value) else value))
            elif not value <= bound:
                problems.append("%s %.3g exceeds the tolerance %.3g" % (name, value, bound))
        fields = {"errors": _json_errors(errors), "tolerance": dict(self.tolerance), "detail": detail}
        if problems:
            cell.call = None
            return verdict("incorrect", "; ".join(problems), **fields)
        return self._ready(cell, verdict("ok", **fields), verdict)

    def _ready(self, cell, line, verdict):
        """A cell that passed its check is warmed up and calibrated at once, so the check line can
        say how it is timed (a CUDA graph or plain launches). What that raises fails the cell."""
        inputs = self.resident[1]
        sets = inputs.sets
        try:
            cell.timing = self.timer.prepare(cell.call, sets, Context.log)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            self._require_alive("warming up %s at %s" % (line["variant"], line["point"]))
            cell.call = None
            status = "infeasible" if _is_resource_error(e) or isinstance(e, Infeasible) else "incorrect"
            line.pop("reason", None)
            return verdict(status, "raised while warming up: " + _exception_text(e))
        line.setdefault("detail", {})["timing"] = "%s: %s" % (cell.timing.mode, cell.timing.note)
        return line


def _numeric_items(errors):
    return [(k, float(v)) for k, v in sorted(errors.items()) if _is_number(v)]


def _json_errors(errors):
    """Errors as the check line carries them: numbers, null where not a number."""
    result = {}
    for key, value in errors.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            value = None
        result[str(key)] = value if value is not None and math.isfinite(value) else None
    return result


# ============================================================================ the default compare

def _accumulate_errors(got, want, sums, where):
    if hasattr(want, "detach") and hasattr(want, "double"):  # torch tensors
        g = got.detach().double().flatten() if hasattr(got, "detach") else None
        w = want.detach().double().flatten()
        if g is None or g.numel() != w.numel():
            raise Incorrect("%s: expected a tensor of %d values" % (where, w.numel()))
        g = g.to(w.device)
        if not bool(g.isfinite().all()) and bool(w.isfinite().all()):
            raise Incorrect("%s: NaN or infinite values" % where)
        d = g - w
        sums[0] += float((d * d).sum())
        sums[1] += float((w * w).sum())
        if d.numel():
            sums[2] = max(sums[2], float(d.abs().max()))
        return
    if hasattr(want, "__array__") and not isinstance(want, (list, tuple)):  # numpy arrays
        import numpy as np
        w = np.asarray(want, dtype=np.float64).ravel()
        g = np.asarray(got, dtype=np.float64).ravel()
        if g.size != w.size:
            raise Incorrect("%s: expected %d values, got %d" % (where, w.size, g.size))
        d = g - w
        sums[0] += float((d * d).sum())
        sums[1] += float((w * w).sum())
        if d.size:
            sums[2] = max(sums[2], float(np.abs(d).max()))
        return
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Incorrect("%s: expected a sequence of %d items" % (where, len(want)))
        for i, (g, w) in enumerate(zip(got, want)):
            _accumulate_errors(g, w, sums, "%s[%d]" % (where, i))
        return
    try:
        g, w = float(got), float(want)
    except (TypeError, ValueError):
        raise Incorrect("%s: expected a number, got %s" % (where, type(got).__name__))
    if not math.isfinite(g) and math.isfinite(w):
        raise Incorrect("%s: %r" % (where, g))
    sums[0] += (g - w) ** 2
    sums[1] += w * w
    sums[2] = max(sums[2], abs(g - w))
