#!/bin/sh
# Prints log lines and then, as its last JSON line, a result object: the
# command adapter's json_pointer rules read it. Values are formulas of the
# arguments: tokens_per_s = 500 * batch, latency_ms = 2 + batch / 4.
batch="$1"
echo "{not json: a log line that starts with a brace"
echo '{"event": "start", "batch": '"$batch"'}'
echo "running"
awk -v b="$batch" 'BEGIN { printf "{\"result\": {\"tokens_per_s\": %d, \"latency_ms\": %.2f, \"name\": \"b%d\"}}\n", 500 * b, 2 + b / 4, b }'
echo "bye"
