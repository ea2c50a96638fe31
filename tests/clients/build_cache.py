#!/usr/bin/env python3
"""The test suite's cache of `mcpbox build` results, so that one test run builds each distinct
source once: the docs pages and the tests that only need a built server (not the tests of the
build itself, which run `mcpbox build` directly) ask for the same npm and PyPI servers, and the
protections phase asks again.

    build_cache.py MCPBOX build SOURCE [OPTIONS...] -o OUT.wasm

runs `MCPBOX build ...` as asked, unless the cache under $MCPBOX_TEST_BUILD_CACHE already holds the
result of the same build: then it writes the same OUT.wasm and OUT.compat.json, prints what the
build printed (its output paths made the requested ones) and exits as it did. Failed builds are
kept too (a refusal is a result).

The key is everything that changes the result: the mcpbox binary (its build layer, compatibility
layer and toolchain pins are carried in it), the arguments (the output's file name, not its
folder), the Node.js that runs the JavaScript toolchain (by its file), the source's contents when it is a local file or folder, the working directory when
the source is relative, and the environment mcpbox reads for a build (every MCPBOX_ variable but
the cache, state and log ones, and FAILPOINTS: an armed fail point changes what a build does;
empty ones are unset ones).
Entries made by another mcpbox binary are removed when a new one is written.
"""

import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

# mcpbox's variables that change nothing a build makes.
NEUTRAL = {"MCPBOX_CACHE_DIR", "MCPBOX_STATE_DIR", "MCPBOX_LOG", "MCPBOX_TEST_BUILD_CACHE", "MCPBOX_TEST_TIMES"}


def binary_digest(cache: pathlib.Path, mcpbox: pathlib.Path) -> str:
    """The binary's sha256, remembered per (path, size, mtime): hashing 200 MB costs a second."""
    stat = mcpbox.stat()
    remembered = cache / "binaries.json"
    seen = json.loads(remembered.read_text()) if remembered.exists() else {}
    stamp = f"{mcpbox.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if stamp not in seen:
        digest = hashlib.sha256()
        with open(mcpbox, "rb") as binary:
            for block in iter(lambda: binary.read(1 << 20), b""):
                digest.update(block)
        seen[stamp] = digest.hexdigest()
        staging = remembered.with_suffix(f".{os.getpid()}")
        staging.write_text(json.dumps(seen))
        staging.replace(remembered)
    return seen[stamp]


def tree_digest(path: pathlib.Path) -> str:
    """A local source's names, link targets and bytes (nothing followed)."""
    digest = hashlib.sha256()
    entries = [path] if not path.is_dir() or path.is_symlink() else sorted(path.rglob("*"))
    for entry in entries:
        digest.update(str(entry.relative_to(path.parent if entry == path else path)).encode() + b"\0")
        if entry.is_symlink():
            digest.update(b"link:" + os.readlink(entry).encode())
        elif entry.is_file():
            digest.update(entry.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def main() -> int:
    mcpbox = pathlib.Path(sys.argv[1])
    args = sys.argv[2:]
    cache_root = os.environ.get("MCPBOX_TEST_BUILD_CACHE")
    if not cache_root or not args or args[0] != "build" or "-o" not in args:
        os.execv(mcpbox, [str(mcpbox), *args])
    cache = pathlib.Path(cache_root)
    cache.mkdir(parents=True, exist_ok=True)
    at = args.index("-o")
    out = pathlib.Path(args[at + 1])
    if not out.is_absolute():
        out = pathlib.Path.cwd() / out
    key = hashlib.sha256()
    binary = binary_digest(cache, mcpbox)
    key.update(binary.encode())
    # The Node.js that runs the JavaScript toolchain, given or found on PATH, by its file.
    asked = args[:at + 1] + [out.name] + args[at + 2:]
    node = shutil.which("node") or ""
    if "--node" in asked:
        given = asked.index("--node")
        node = asked[given + 1]
        del asked[given:given + 2]
    key.update(json.dumps(asked).encode())
    key.update(str(pathlib.Path(node).resolve() if node else "").encode())
    source = pathlib.Path(args[1])
    if not args[1].startswith(("npm:", "pypi:")) and source.exists():
        key.update(tree_digest(source.resolve()).encode())
        if not source.is_absolute():
            key.update(str(pathlib.Path.cwd()).encode())
    environment = sorted((name, value) for name, value in os.environ.items()
                         if value and ((name.startswith("MCPBOX_") and name not in NEUTRAL) or name == "FAILPOINTS"))
    key.update(json.dumps(environment).encode())
    entry = cache / key.hexdigest()[:32]
    with open(cache / f"{entry.name}.lock", "w") as lock:
        # One build per key: a second asker waits for the first's result.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (entry / "result.json").exists():
            build(mcpbox, args, at, out.name, entry, binary, cache)
        result = json.loads((entry / "result.json").read_text())
    out.parent.mkdir(parents=True, exist_ok=True)
    for made in [out.name, pathlib.Path(out.name).with_suffix(".compat.json").name]:
        if (entry / made).exists():
            shutil.copyfile(entry / made, out.parent / made)
    sys.stdout.write(result["stdout"].replace(str(entry), str(out.parent)))
    sys.stderr.write(result["stderr"].replace(str(entry), str(out.parent)))
    return result["status"]


def build(mcpbox, args, at, name, entry, binary, cache):
    """Runs the build into `entry`, keeps what it printed, and removes other binaries' entries."""
    shutil.rmtree(entry, ignore_errors=True)
    entry.mkdir()
    run = subprocess.run([str(mcpbox), *args[:at + 1], str(entry / name), *args[at + 2:]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    (entry / "binary").write_text(binary)
    (entry / "result.json").write_text(json.dumps(
        {"status": run.returncode, "stdout": run.stdout, "stderr": run.stderr}))
    for other in cache.iterdir():
        if other.is_dir() and (other / "binary").exists() and (other / "binary").read_text() != binary:
            shutil.rmtree(other, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
