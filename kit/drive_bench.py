#!/usr/bin/env python3
"""drive_bench.py: try a bench (protocol version 2) without perfwatch, as perfwatch's runner would.

Reads a version 2 manifest (perfwatch.json), makes the plan from it (the points are the cartesian
product of sweep.axes, the first axis varying fastest, named by sweep.label), starts the bench,
asks for a fixed number of trials per variant x point, one at a time and interleaved (A B A B),
validates every line the bench writes against schemas/bench/v2/ and the protocol's order, and
prints per variant x point the check and the median, min and max of each metric.

    python3 kit/drive_bench.py --manifest examples/python_cpu/perfwatch.json --repo examples/python_cpu

It is not the runner: no stopping rule (a fixed --trials), no store, no judging. Exit: 0 when the
manifest, the plan and every line are valid and the bench exited 0; 1 when the bench broke the
protocol or failed; 2 for a bad manifest or bad arguments.

Also a module: SchemaValidator (the subset of JSON Schema draft-07 that schemas/ uses, standard
library only), plan_from_manifest(), drive().
"""

import argparse
import itertools
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMAS = os.path.join(os.path.dirname(HERE), "schemas")


# ============================================================================ JSON Schema

class SchemaError(Exception):
    """A schema uses a keyword this validator does not know: fail loudly rather than pass."""


_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "default", "definitions", "examples",
                "format"}
_KEYWORDS = {"$ref", "type", "const", "enum", "required", "properties", "additionalProperties",
             "propertyNames", "minProperties", "maxProperties", "items", "minItems", "maxItems", "minLength",
             "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "oneOf",
             "anyOf", "allOf", "not", "if", "then", "else"} | _ANNOTATIONS


def _json_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b


def _is_type(x, t):
    if t == "object":
        return isinstance(x, dict)
    if t == "array":
        return isinstance(x, list)
    if t == "string":
        return isinstance(x, str)
    if t == "boolean":
        return isinstance(x, bool)
    if t == "null":
        return x is None
    if t == "integer":
        return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    if t == "number":
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    raise SchemaError("unknown type %r" % t)


def _ecma_pattern(pattern):
    # ECMAScript's $ is the end of the string; Python's also matches before a final newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + r"\Z"
    return pattern


class SchemaValidator:
    """Validates JSON documents against the schemas of a folder (by their $id), following $ref
    across files. validate() returns a list of messages, each naming the path ("/metrics/time_us:
    must be > 0"); empty means valid."""

    def __init__(self, root=DEFAULT_SCHEMAS):
        self.docs = {}
        for dirpath, _, files in os.walk(root):
            for name in sorted(files):
                if name.endswith(".schema.json"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        doc = json.load(f)
                    self.docs[doc.get("$id") or os.path.relpath(path, root)] = doc
        self._patterns = {}

    def validate(self, instance, schema_id):
        if schema_id not in self.docs:
            raise SchemaError("no schema with $id %s" % schema_id)
        errors = []
        self._check(instance, self.docs[schema_id], schema_id, "", errors)
        return errors

    def _resolve(self, ref, base):
        target = urllib.parse.urljoin(base, ref)
        url, _, fragment = target.partition("#")
        url = url or base
        if url not in self.docs:
            raise SchemaError("$ref %s (from %s): no such schema" % (ref, base))
        node = self.docs[url]
        for part in [p for p in fragment.split("/") if p]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node, url

    def _check(self, x, schema, base, path, errors):
        if schema is True:
            return
        if schema is False:
            errors.append("%s: not allowed" % (path or "/"))
            return
        if "$ref" in schema:
            node, url = self._resolve(schema["$ref"], base)
            self._check(x, node, url, path, errors)
            return
        unknown = set(schema) - _KEYWORDS
        if unknown:
            raise SchemaError("%s: unsupported keyword(s) %s" % (base, ", ".join(sorted(unknown))))
        where = path or "/"

        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_is_type(x, t) for t in types):
                errors.append("%s: must be %s, not %s" % (where, " or ".join(types), json.dumps(x)[:80]))
                return
        if "const" in schema and not _json_equal(x, schema["const"]):
            errors.append("%s: must be %s" % (where, json.dumps(schema["const"])))
        if "enum" in schema and not any(_json_equal(x, e) for e in schema["enum"]):
            errors.append("%s: must be one of %s" % (where, json.dumps(schema["enum"])))

        if isinstance(x, dict):
            for key in schema.get("required", []):
                if key not in x:
                    errors.append("%s: missing required field %s" % (where, key))
            props = schema.get("properties", {})
            for key, value in x.items():
                if key in props:
                    self._check(value, props[key], base, path + "/" + key, errors)
                elif "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        errors.append("%s: unknown field %s" % (where, key))
                    elif extra is not True:
                        self._check(value, extra, base, path + "/" + key, errors)
                if "propertyNames" in schema:
                    self._check(key, schema["propertyNames"], base, path + "/" + key + " (name)", errors)
            if len(x) < schema.get("minProperties", 0):
                errors.append("%s: needs at least %d fields" % (where, schema["minProperties"]))
            if "maxProperties" in schema and len(x) > schema["maxProperties"]:
                errors.append("%s: at most %d fields" % (where, schema["maxProperties"]))
        if isinstance(x, list):
            if "items" in schema:
                for i, item in enumerate(x):
                    self._check(item, schema["items"], base, "%s/%d" % (path, i), errors)
            if len(x) < schema.get("minItems", 0):
                errors.append("%s: needs at least %d items" % (where, schema["minItems"]))
            if "maxItems" in schema and len(x) > schema["maxItems"]:
                errors.append("%s: at most %d items" % (where, schema["maxItems"]))
        if isinstance(x, str):
            if len(x) < schema.get("minLength", 0):
                errors.append("%s: shorter than %d characters" % (where, schema["minLength"]))
            if "maxLength" in schema and len(x) > schema["maxLength"]:
                errors.append("%s: longer than %d characters" % (where, schema["maxLength"]))
            if "pattern" in schema:
                pattern = self._patterns.setdefault(schema["pattern"], re.compile(_ecma_pattern(schema["pattern"])))
                if not pattern.search(x):
                    errors.append("%s: %s does not match %s" % (where, json.dumps(x)[:80], schema["pattern"]))
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            if "minimum" in schema and x < schema["minimum"]:
                errors.append("%s: must be >= %s" % (where, schema["minimum"]))
            if "maximum" in schema and x > schema["maximum"]:
                errors.append("%s: must be <= %s" % (where, schema["maximum"]))
            if "exclusiveMinimum" in schema and not x > schema["exclusiveMinimum"]:
                errors.append("%s: must be > %s" % (where, schema["exclusiveMinimum"]))
            if "exclusiveMaximum" in schema and not x < schema["exclusiveMaximum"]:
                errors.append("%s: must be < %s" % (where, schema["exclusiveMaximum"]))

        for sub in schema.get("allOf", []):
            self._check(x, sub, base, path, errors)
        if "anyOf" in schema:
            if not any(not self._sub(x, sub, base, path) for sub in schema["anyOf"]):
                errors.append("%s: matches none of anyOf" % where)
        if "oneOf" in schema:
            matches = sum(1 for sub in schema["oneOf"] if not self._sub(x, sub, base, path))
            if matches != 1:
                errors.append("%s: matches %d of oneOf's schemas, not exactly one" % (where, matches))
        if "not" in schema and not self._sub(x, schema["not"], base, path):
            errors.append("%s: must not match the 'not' schema" % where)
        if "if" in schema:
            branch = "then" if not self._sub(x, schema["if"], base, path) else "else"
            if branch in schema:
                self._check(x, schema[branch], base, path, errors)

    def _sub(self, x, schema, base, path):
        errors = []
        self._check(x, schema, base, path, errors)
        return errors


# ============================================================================ manifest -> plan

class ManifestError(Exception):
    pass


def point_label(template, axes, where="sweep.label"):
    """'C{batch}' with axes {"batch": 48} -> 'C48'."""
    def value(match):
        name = match.group(1)
        if name not in axes:
            raise ManifestError("%s: {%s} is not an axis (axes: %s)" % (where, name, ", ".join(axes)))
        return format_axis_value(axes[name])
    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", value, template)


def format_axis_value(v):
    """An axis value in a label: 48, 0.5, bf16 (Python's shortest round-trip form for numbers)."""
    return str(v)


def plan_from_manifest(manifest, seed=0, backend=None):
    """The plan perfwatch's runner sends for a version 2 manifest (every variant, every point)."""
    if manifest.get("schema_version") != 2:
        raise ManifestError("schema_version: this driver reads version 2 manifests only")
    sweep = manifest["sweep"]
    names = list(sweep["axes"])
    values = [sweep["axes"][n] for n in names]
    points = []
    # The first axis varies fastest.
    for combo in itertools.product(*reversed(values)):
        axes = dict(zip(names, reversed(combo)))
        if "label" in sweep:
            pid = point_label(sweep["label"], axes)
        else:
            varying = [n for n in names if len(sweep["axes"][n]) > 1] or names
            pid = ",".join("%s=%s" % (n, format_axis_value(axes[n])) for n in varying)
        points.append({"id": pid, "axes": axes})
    ids = [p["id"] for p in points]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ManifestError("sweep.label: two points are both labelled %s" % dup)
    metrics = manifest.get("metrics", [{"name": "time_us", "unit": "us", "direction": "lower_is_better"}])
    judged = manifest.get("metric", metrics[0]["name"])
    if judged not in [m["name"] for m in metrics]:
        raise ManifestError("metric: %s is not one of the declared metrics" % judged)
    bench = manifest["bench"]
    trials = manifest.get("trials", {})
    plan = {"kind": "plan", "schema_version": 2, "backend": backend or bench.get("backend", "auto"),
            "variants": [{"name": v["name"], "params": v["params"]} for v in manifest["variants"]],
            "points": points, "metrics": metrics, "judged_metric": judged,
            "params": bench.get("params", {}),
            "timing": {"min_trial_ms": trials.get("min_trial_ms", 20), "warmup_ms": trials.get("warmup_ms", 50)}}
    if seed:
        plan["seed"] = seed
    return plan


# ============================================================================ the run

class _Reader:
    """The bench's stdout, line by line, with a timeout (a thread feeds a queue)."""

    def __init__(self, stream):
        self.lines = queue.Queue()
        self.ended = False
        self.thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self.thread.start()

    def _pump(self, stream):
        for raw in stream:
            self.lines.put(raw)
        self.lines.put(None)

    def next(self, timeout_s):
        """The next line, or None at the end of the output (and every time after)."""
        if self.ended:
            return None
        try:
            raw = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise TimeoutError("no line from the bench in %g s" % timeout_s)
        self.ended = raw is None
        return raw


class _Stop(Exception):
    """The conversation is over (an error line, end of output, the deadline)."""


class Run:
    """What one drive() saw: every line, the violations of the protocol, per cell what came back."""

    def __init__(self, plan):
        self.plan = plan
        self.lines = []          # every parsed line, in order
        self.violations = []     # messages
        self.header = None
        self.variant_lines = {}
        self.checks = {}         # (variant, point) -> check line
        self.trials = {}         # (variant, point) -> [trial lines]
        self.skipped = {}        # (variant, point) -> last skipped line
        self.error = None
        self.footer = None
        self.exit_code = None
        self.wall_s = 0.0

    def ok(self):
        return not self.violations and self.error is None and self.exit_code == 0 and self.footer is not None


def drive(command, plan, trials=3, cwd=None, env=None, schemas=DEFAULT_SCHEMAS, variants=None, points=None,
          idle_timeout_s=300.0, deadline_s=None, stderr=None, log=None):
    """Runs the bench (argv list or shell string) with the plan; asks `trials` trials per variant x
    point, one request at a time, variants interleaved, points in order. Returns a Run."""
    validator = SchemaValidator(schemas)
    run = Run(plan)
    plan_errors = validator.validate(plan, "bench/v2/plan.schema.json")
    if plan_errors:
        raise ManifestError("the plan is not valid: " + "; ".join(plan_errors[:5]))
    started = time.monotonic()
    proc = subprocess.Popen(command, shell=isinstance(command, str), cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, text=True, encoding="utf-8", errors="replace",
                            bufsize=1)
    reader = _Reader(proc.stdout)
    variant_names = [v["name"] for v in plan["variants"]]
    declared = {m["name"] for m in plan["metrics"]}
    judged = plan["judged_metric"]
    state = {"expect": "header"}

    def say(message):
        if log:
            log(message)

    def read():
        raw = reader.next(idle_timeout_s)
        if raw is None:
            return None
        text = raw.rstrip("\n")
        try:
            doc = json.loads(text)
        except ValueError:
            run.violations.append("not JSON: %r" % text[:200])
            return {"kind": "?"}
        if not isinstance(doc, dict):
            run.violations.append("not a JSON object: %r" % text[:200])
            return {"kind": "?"}
        kind = doc.get("kind")
        schema = "bench/v2/%s.schema.json" % kind
        if kind not in ("header", "variant", "check", "trial", "skipped", "footer", "error"):
            run.violations.append("a line of unknown kind %r: %s" % (kind, text[:200]))
        else:
            for e in validator.validate(doc, schema):
                run.violations.append("%s line: %s" % (kind, e))
        run.lines.append(doc)
        if kind == "error":
            run.error = doc
        return doc

    def send(obj):
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    try:
        send(plan)
        doc = read()
        if doc is None or doc.get("kind") != "header":
            if doc is not None and doc.get("kind") != "error":
                run.violations.append("the first line is not the header: %s" % json.dumps(doc)[:200])
            raise _Stop
        run.header = doc
        for name in variant_names:
            doc = read()
            if doc is None or doc.get("kind") != "variant":
                if doc is not None and doc.get("kind") != "error":
                    run.violations.append("expected the variant line of %s, got %s" % (name, json.dumps(doc)[:200]))
                raise _Stop
            if doc.get("variant") != name:
                run.violations.append("variant lines out of order: expected %s, got %s" % (name, doc.get("variant")))
            run.variant_lines[doc.get("variant")] = doc
        wanted_variants = [v for v in variant_names if not variants or v in variants]
        wanted_points = [p["id"] for p in plan["points"] if not points or p["id"] in points]
        for pid in wanted_points:
            for _ in range(trials):
                for v in wanted_variants:
                    if deadline_s is not None and time.monotonic() - started > deadline_s:
                        say("deadline of %g s reached: no more requests" % deadline_s)
                        raise _Stop
                    key = (v, pid)
                    if key in run.skipped:
                        continue
                    send({"kind": "measure", "variant": v, "point": pid, "trials": 1})
                    doc = read()
                    if doc is None or doc.get("kind") == "error":
                        raise _Stop
                    if key not in run.checks:
                        if doc.get("kind") != "check":
                            run.violations.append("%s at %s: the first answer is not a check line: %s"
                                                  % (v, pid, json.dumps(doc)[:200]))
                        else:
                            if (doc.get("variant"), doc.get("point")) != key:
                                run.violations.append("check line for %s at %s names %s at %s" % (
                                    v, pid, doc.get("variant"), doc.get("point")))
                            run.checks[key] = doc
                            say("%s at %s: check %s%s" % (v, pid, doc.get("status"),
                                                          " (" + doc["reason"] + ")" if doc.get("reason") else ""))
                            doc = read()
                            if doc is None or doc.get("kind") == "error":
                                raise _Stop
                    kind = doc.get("kind")
                    if (doc.get("variant"), doc.get("point")) != key:
                        run.violations.append("the answer for %s at %s names %s at %s" % (
                            v, pid, doc.get("variant"), doc.get("point")))
                    if kind == "trial":
                        if run.checks.get(key, {}).get("status") != "ok":
                            run.violations.append("%s at %s: a trial without an ok check" % key)
                        got = run.trials.setdefault(key, [])
                        if doc.get("trial") != len(got) + 1:
                            run.violations.append("%s at %s: trial number %s, expected %d" % (v, pid, doc.get("trial"), len(got) + 1))
                        names = set(doc.get("metrics", {}))
                        if judged not in names:
                            run.violations.append("%s at %s: trial lacks the judged metric %s" % (v, pid, judged))
                        if names - declared:
                            run.violations.append("%s at %s: undeclared metrics %s" % (v, pid, sorted(names - declared)))
                        got.append(doc)
                    elif kind == "skipped":
                        run.skipped[key] = doc
                        if run.checks.get(key, {}).get("status") == "ok" and not run.trials.get(key):
                            say("%s at %s: skipped after an ok check: %s" % (v, pid, doc.get("reason")))
                    else:
                        run.violations.append("%s at %s: expected a trial or skipped line, got %s" % (v, pid, kind))
    except _Stop:
        pass
    except TimeoutError as e:
        run.violations.append(str(e))
        proc.kill()
    except BrokenPipeError:
        pass
    try:
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    if run.error is None:
        try:
            while True:
                doc = read()
                if doc is None:
                    break
                if doc.get("kind") == "footer":
                    run.footer = doc
                elif doc.get("kind") != "error":
                    run.violations.append("after stdin closed: a %s line" % doc.get("kind"))
        except TimeoutError as e:
            run.violations.append(str(e))
            proc.kill()
    try:
        run.exit_code = proc.wait(timeout=idle_timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        run.exit_code = proc.wait()
        run.violations.append("the bench did not exit after stdin closed")
    if run.footer is not None:
        written = sum(1 for d in run.lines if d.get("kind") == "trial")
        if run.footer.get("trials") != written:
            run.violations.append("footer says %s trials, %d were written" % (run.footer.get("trials"), written))
    if run.error is None and run.footer is None and not run.violations:
        run.violations.append("no footer (exit code %s)" % run.exit_code)
    if run.error is not None and run.exit_code == 0:
        run.violations.append("an error line, then exit code 0")
    run.wall_s = time.monotonic() - started
    return run


def summarize(run):
    """Per variant x point: check status (and reason, errors), trials, and for each metric the
    median, min and max; the SM clock and throttled trials."""
    cells = []
    for v in run.plan["variants"]:
        for p in run.plan["points"]:
            key = (v["name"], p["id"])
            check = run.checks.get(key)
            if check is None and key not in run.skipped:
                continue
            trials = run.trials.get(key, [])
            cell = {"variant": key[0], "point": key[1], "axes": p["axes"],
                    "check": check.get("status") if check else None, "trials": len(trials)}
            if check:
                for field in ("reason", "errors", "tolerance", "detail"):
                    if field in check:
                        cell[field] = check[field]
            if key in run.skipped:
                cell["skipped"] = run.skipped[key].get("reason")
            metrics = {}
            for m in run.plan["metrics"]:
                values = [t["metrics"][m["name"]] for t in trials if m["name"] in t["metrics"]]
                if values:
                    metrics[m["name"]] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
            cell["metrics"] = metrics
            clocks = [t.get("clock_mhz") for t in trials if t.get("clock_mhz") is not None]
            cell["clock_mhz"] = {"median": statistics.median(clocks), "min": min(clocks), "max": max(clocks)} if clocks else None
            cell["throttled"] = sum(1 for t in trials if t.get("throttled"))
            cell["steps"] = [t.get("steps") for t in trials]
            cells.append(cell)
    return {"header": run.header, "variants": list(run.variant_lines.values()), "cells": cells,
            "violations": run.violations, "error": run.error, "footer": run.footer, "exit_code": run.exit_code,
            "wall_s": round(run.wall_s, 3), "ok": run.ok()}


def format_table(summary, plan):
    judged = plan["judged_metric"]
    others = [m["name"] for m in plan["metrics"] if m["name"] != judged]
    head = ["point", "variant", "check", "n", judged + " median (min..max)"] + others + ["SM MHz"]
    rows = [head]
    for c in summary["cells"]:
        m = c["metrics"].get(judged)
        row = [c["point"], c["variant"], c["check"] or "-", str(c["trials"]),
               "%.4g (%.4g..%.4g)" % (m["median"], m["min"], m["max"]) if m else (c.get("reason") or c.get("skipped") or "")[:60]]
        for o in others:
            mo = c["metrics"].get(o)
            row.append("%.4g" % mo["median"] if mo else "")
        row.append("%.0f" % c["clock_mhz"]["median"] if c["clock_mhz"] else "")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(len(head))).rstrip() for r in rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True, help="a version 2 perfwatch.json")
    ap.add_argument("--repo", default=None, help="the checkout the bench runs in (default: the manifest's folder)")
    ap.add_argument("--trials", type=int, default=3, help="trials per variant x point (default 3)")
    ap.add_argument("--variant", action="append", help="only this variant (repeatable)")
    ap.add_argument("--point", action="append", help="only this point id (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default=None, help="override bench.backend")
    ap.add_argument("--schemas", default=DEFAULT_SCHEMAS)
    ap.add_argument("--deadline-s", type=float, default=None, help="send no request after this many seconds")
    ap.add_argument("--lines", help="write every line the bench wrote here (JSON lines)")
    ap.add_argument("--summary", help="write the summary here (JSON)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("command", nargs="*", help="the bench command (default: the manifest's bench.command)")
    args = ap.parse_args(argv)

    try:
        with open(args.manifest, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        print("drive_bench: %s: %s" % (args.manifest, e), file=sys.stderr)
        return 2
    validator = SchemaValidator(args.schemas)
    problems = validator.validate(manifest, "manifest.v2.schema.json")
    if problems:
        for p in problems:
            print("drive_bench: %s: %s" % (args.manifest, p), file=sys.stderr)
        return 2
    try:
        plan = plan_from_manifest(manifest, seed=args.seed, backend=args.backend)
    except ManifestError as e:
        print("drive_bench: %s: %s" % (args.manifest, e), file=sys.stderr)
        return 2
    bench = manifest["bench"]
    if bench.get("adapter", "native") != "native":
        print("drive_bench: %s: bench.adapter %s: this driver runs native benches only" % (args.manifest, bench["adapter"]),
              file=sys.stderr)
        return 2
    repo = os.path.abspath(args.repo or os.path.dirname(os.path.abspath(args.manifest)))
    cwd = os.path.join(repo, bench.get("workdir", "."))
    env = dict(os.environ)
    env.update(bench.get("env", {}))
    command = args.command or bench["command"]
    log = None if args.quiet else (lambda m: print("drive_bench: " + m, file=sys.stderr, flush=True))
    run = drive(command, plan, trials=args.trials, cwd=cwd, env=env, schemas=args.schemas, variants=args.variant,
                points=args.point, idle_timeout_s=bench.get("idle_timeout_s", 300), deadline_s=args.deadline_s,
                log=log)
    summary = summarize(run)
    if args.lines:
        with open(args.lines, "w", encoding="utf-8") as f:
            for doc in run.lines:
                f.write(json.dumps(doc) + "\n")
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    if run.header:
        h = run.header
        print("bench: %s; backend %s; timer %s; device %s" % (h["bench"], h["backend"], h["timer"], h["device"]["name"]))
    print(format_table(summary, plan))
    for v in run.violations:
        print("PROTOCOL VIOLATION: " + v)
    if run.error:
        print("bench error: %s" % run.error.get("message"))
    print("exit code %s, %.1f s, %s" % (run.exit_code, run.wall_s, "ok" if run.ok() else "FAILED"))
    return 0 if run.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
