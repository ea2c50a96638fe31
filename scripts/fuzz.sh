#!/usr/bin/env bash
# Long fuzz runs of the host's input surfaces (issue 13, item 6; the targets are described in
# host/src/fuzzing.rs). Runs every target (or those named) for SECONDS each, in rounds of
# CASES cases with a fresh random seed per round, one target at a time, and prints a table.
# A failure is shrunk and its seed saved under host/proptest-regressions/ (commit it: every
# later run, including the test command's, replays it first).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 fuzz_plain_values
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
cases=${CASES:-2000}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_stdio_bytes fuzz_stdio_messages fuzz_plain_values fuzz_config_file fuzz_cursor_forged fuzz_cursor_walk fuzz_input_responses)
fi
binary=$(cargo test -p mcpbox --lib --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
# A copy, so that rebuilding the host meanwhile does not pull the binary from under a long run.
copy=$(mktemp /tmp/mcpbox-fuzz.XXXXXX)
trap 'rm -f "$copy"' EXIT
cp "$binary" "$copy"
chmod +x "$copy"
binary=$copy
printf '%-22s %8s %10s %8s %s\n' target rounds cases seconds result
failed=0
for target in "${targets[@]}"; do
  start=$SECONDS rounds=0 result=ok
  while [ $((SECONDS - start)) -lt "$seconds" ]; do
    if ! PROPTEST_CASES=$cases "$binary" --quiet "$target" >"/tmp/fuzz-$target.log" 2>&1; then
      result="FAILED (see /tmp/fuzz-$target.log)" failed=1
      break
    fi
    if ! grep -q "1 passed" "/tmp/fuzz-$target.log"; then
      result="no such target" failed=1
      break
    fi
    rounds=$((rounds + 1))
  done
  printf '%-22s %8d %10d %8d %s\n' "$target" "$rounds" $((rounds * cases)) $((SECONDS - start)) "$result"
done
exit $failed
