#!/usr/bin/env python3
"""Proves each protection is guarded by tests: for every entry of tests/protections.toml, run its
guarding tests with only its fail point armed (FAILPOINTS=NAME=return) and require each to FAIL.
Uses the test suite's own build (`cargo test --features failpoints`, which scripts/test.sh has
just run with nothing armed): no build of its own. Each guarding test is a process of its own,
one more at once than the machine has cores, the longest first (as long as they took last time).
Prints a table; exits non-zero if any guarding test passed with its protection off.

    scripts/check-protections.py                 # all, then the guarding tests with nothing armed
    scripts/check-protections.py memory pins    # those whose name or fail point contains "memory" or "pins"
    scripts/check-protections.py --no-baseline   # scripts/test.sh: `cargo test` just ran them

Adding a protection: docs/architecture.md ("Adding a protection")."""

import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import time
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMES = ROOT / "target" / "protection-times.json"
# A guarding test that hangs with its protection off is caught, but must not hold CI for long.
TEST_TIMEOUT_S = 300
ENV = dict(os.environ, MCPBOX_TEST_FAILPOINTS="1")
# The guests (and their fail-point builds) are built: each guarding test's process need not ask
# cargo again (tests/integration/common/mod.rs, `guests`). Run alone, this script builds them
# first, once.
ENV["MCPBOX_TEST_GUESTS_BUILT"] = "1"


def test_binaries():
    """The integration test binary and the library's unit test binary of the suite's build (the
    guests built first, once, for every process to use as they are)."""
    guests = subprocess.run(["bash", str(ROOT / "scripts" / "build-guests.sh")], cwd=ROOT, env=ENV)
    if guests.returncode != 0:
        raise SystemExit("building the guests failed")
    built = subprocess.run(
        ["cargo", "test", "--workspace", "--features", "failpoints", "--no-run", "--message-format=json"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if built.returncode != 0:
        raise SystemExit(f"the test build failed:\n{built.stderr[-3000:]}")
    found = {}
    for line in built.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        target = message["target"]
        if target["name"] == "integration":
            found["integration"] = message["executable"]
        elif target["name"] == "mcpbox" and "lib" in target["kind"] and message["profile"]["test"]:
            found["lib"] = message["executable"]
    if set(found) != {"integration", "lib"}:
        raise SystemExit(f"cannot find the test binaries in cargo's output (found {found})")
    mcpbox = ROOT / "target" / "debug" / "mcpbox"
    version = subprocess.run([mcpbox, "--version"], env=ENV, stdout=subprocess.PIPE, text=True).stdout
    if "fail-point build" not in version:
        raise SystemExit(f"{mcpbox} is not a fail-point build ({version.strip()}): build with --features failpoints")
    return found


def unarmed_times():
    """Each integration test's wall time in the suite's last run with nothing armed
    (target/test-times.tsv, which scripts/test.sh has the harness write)."""
    times = {}
    tsv = ROOT / "target" / "test-times.tsv"
    for line in tsv.read_text().splitlines() if tsv.exists() else []:
        seconds, _, name = line.partition("\t")
        try:
            times[name] = float(seconds)
        except ValueError:
            continue
    return times


def split(test):
    """(binary key, exact test name) of a table's test name."""
    return ("lib", test[len("lib:"):]) if test.startswith("lib:") else ("integration", test)


def run_test(binaries, test, failpoint):
    """(passed, seconds, output) of one guarding test run alone with `failpoint` armed (None: none)."""
    which, name = split(test)
    env = dict(ENV)
    env.pop("FAILPOINTS", None)
    if failpoint:
        env["FAILPOINTS"] = f"{failpoint}=return"
    start = time.time()
    try:
        result = subprocess.run([binaries[which], "--exact", name], cwd=ROOT / "host", env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout=TEST_TIMEOUT_S)
        output, code = result.stdout, result.returncode
    except subprocess.TimeoutExpired as e:
        output, code = f"{e.output or ''}\n(killed after {TEST_TIMEOUT_S} s)", -1
    if "running 1 test" not in output:
        raise SystemExit(f"{test}: no such test (its binary ran {output.count('test ')} tests):\n{output[-2000:]}")
    return code == 0, time.time() - start, output


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    baseline = "--no-baseline" not in sys.argv
    # Each argument picks the protections whose name or fail point holds it; none picks all.
    wanted = args or [""]
    table = tomllib.loads((ROOT / "tests" / "protections.toml").read_text())["protection"]
    chosen = [p for p in table if any(w in p["name"] or w in p["failpoint"] for w in wanted)]
    if not chosen:
        raise SystemExit(f"no protection matches {' '.join(wanted)}")
    binaries = test_binaries()
    last = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    unarmed = unarmed_times()
    jobs = [(p["failpoint"], test) for p in chosen for test in p["tests"]]
    if baseline:
        jobs += [(None, test) for test in sorted({t for p in chosen for t in p["tests"]})]

    def expected(job):
        """How long a run should take: as long as it took last time, else as long as the test
        took in this run's suite with nothing armed (a fresh clone has no last time), else a
        minute."""
        return last.get(f"{job[0]} {job[1]}", unarmed.get(job[1], 60))

    # The longest first, so that the last to finish is a short one.
    jobs.sort(key=lambda job: -expected(job))
    results = {}
    started = time.time()
    # One run more at a time than there are cores: a guarding test waits on the servers and
    # tools it starts (two at a time on two cores kept 1.50 of them busy, 2026-11-29).
    workers = (os.cpu_count() or 2) + 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        running = {pool.submit(run_test, binaries, test, point): (point, test) for point, test in jobs}
        for done in concurrent.futures.as_completed(running):
            point, test = running[done]
            passed, seconds, output = done.result()
            results[(point, test)] = (passed, seconds, output)
            what = f"with {point} armed" if point else "with nothing armed"
            verdict = ("PASSED" if passed else "failed") if point else ("passed" if passed else "FAILED")
            print(f"{test} {what}: {verdict} ({seconds:.0f} s)", file=sys.stderr, flush=True)
    TIMES.parent.mkdir(exist_ok=True)
    TIMES.write_text(json.dumps({**last, **{f"{p} {t}": r[1] for (p, t), r in results.items()}}, indent=1))

    missed = 0
    print("| protection switched off | fail point | guarding tests that failed | verdict |")
    print("|---|---|---|---|")
    for protection in chosen:
        point, tests = protection["failpoint"], protection["tests"]
        failed = [t for t in tests if not results[(point, t)][0]]
        seconds = max(results[(point, t)][1] for t in tests)
        caught = len(failed) == len(tests)
        missed += not caught
        verdict = "caught" if caught else "NOT CAUGHT: " + ", ".join(t for t in tests if t not in failed)
        print(f"| {protection['name']} | `{point}` | {len(failed)}/{len(tests)} | {verdict} ({seconds:.0f} s) |")
    broken = sorted(t for (p, t), r in results.items() if p is None and not r[0])
    for test in broken:
        print(f"\nwith nothing armed, {test} failed:\n{results[(None, test)][2][-3000:]}")
    print(f"\n{len(chosen)} protections, {len(jobs)} test runs in {time.time() - started:.0f} s"
          f" on {os.cpu_count()} cores, {workers} at a time: {len(chosen) - missed} caught, {missed} not")
    return 1 if missed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
