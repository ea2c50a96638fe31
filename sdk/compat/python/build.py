"""`mcpbox build` for Python: an unmodified MCP server (a file, a project or a PyPI package)
with mcpbox's compatibility layer under it, made a component by componentize-py.

    python3 build.py --source SOURCE --work DIR --out OUT.wasm --report REPORT.json
                     --componentize PATH --wit DIR [--include DIR]... [--index-url URL]
                     [--find-links DIR|URL]

Steps (each announced on stderr as `step N/5: ...`):
  1. the sources: a PyPI package's wheel (wheels only: no build script of it runs here), a
     project or a file copied (its own files only: hygiene.py); the dependencies its metadata
     names, each by name, installed as pure-Python wheels for the sandbox's CPython by a pip
     that cannot run a package's build code (pipguard.py; the SDK, pydantic and HTTP server
     frameworks are mcpbox's: layer/);
  2. the entry found (the console script, else `__main__`, else the file);
  3. scanned (scan.py): environment, hosts, shims, stubs, blockers with file and line;
  4. the module that boots the layer, compiles the server's own modules for per-call runs, and
     imports every library their code imports;
  5. componentized by componentize-py against mcpbox's WIT (the build's environment left out).
The report is written in every case; the exit status says whether a component was made.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hygiene  # noqa: E402
import scan  # noqa: E402

# The CPython componentize-py 0.25.1 embeds.
GUEST_PYTHON = "3.14"
# Requirements mcpbox provides (layer/) or stubs: never installed.
PROVIDED = {"mcp", "fastmcp", "pydantic", "pydantic-core", "starlette", "uvicorn", "sse-starlette", "fastapi",
            "hypercorn", "anyio", "pydantic-settings-never"}
STUBBED_DISTRIBUTIONS = {"starlette", "uvicorn", "sse-starlette", "fastapi", "hypercorn"}
PIP_PURE = ["--only-binary=:all:", "--platform", "any", "--implementation", "py", "--python-version",
            GUEST_PYTHON, "--abi", "none"]

parser = argparse.ArgumentParser()
for option in ("source", "work", "out", "report", "componentize", "wit"):
    parser.add_argument(f"--{option}", required=True)
parser.add_argument("--include", action="append", default=[])
parser.add_argument("--index-url")
parser.add_argument("--find-links")
# Each turns a protection off; only the test suite's mcpbox passes them (to prove a test guards it).
for switch in ("--with-build-environment", "--follow-links", "--any-requirement", "--with-build-backends",
               "--with-builder-site"):
    parser.add_argument(switch, action="store_true")
args = parser.parse_args()
# Where the index is: only what the user passed to mcpbox build.
INDEX = ([f"--index-url={args.index_url}"] if args.index_url else []) + \
    ([f"--find-links={args.find_links}"] if args.find_links else [])
PIP = [sys.executable, os.path.join(HERE, "pipguard.py")] + (["--with-build-backends"] if args.with_build_backends else [])

report = {"language": "python", "source": args.source, "blockers": [], "shims": [], "stubs": [],
          "environment": [], "hosts": [], "notes": [], "writes_files": False, "uses_network": False}
step = [0]


def announce(what):
    step[0] += 1
    print(f"step {step[0]}/5: {what}", file=sys.stderr, flush=True)


def finish(status):
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)
    sys.exit(status)


def refuse(message):
    report["error"] = message
    print(f"error: {message}", file=sys.stderr)
    finish(1)


def pip(*arguments, target):
    run = subprocess.run([*PIP, "install", "--quiet", "--disable-pip-version-check", "--no-input", "--no-compile",
                          "--target", target, *INDEX, *PIP_PURE, *arguments],
                         capture_output=True, text=True, env={**os.environ, "PIP_NO_WARN_SCRIPT_LOCATION": "1"})
    hygiene.scrub_installed(target)
    return run.returncode, run.stdout + run.stderr


def blocked(what):
    """Stops the build on the report's blockers (exit 2: a refusal with reasons)."""
    if not report["blockers"]:
        return
    print(f"error: {what}:", file=sys.stderr)
    for blocker in report["blockers"]:
        print(f"  {blocker['at']}: {blocker['what']} ({blocker['why']})", file=sys.stderr)
    report["error"] = f"{len(report['blockers'])} blocker(s)"
    finish(2)


def by_name(text, at):
    """`text` if pip may take it by name (the protection off: always), else None and a blocker."""
    return text if args.any_requirement else hygiene.check(text, at, report["blockers"])


def normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(text):
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    return normalized(match.group(1)) if match else ""


def applies(requirement):
    """A requirement's marker, for the sandbox's CPython (no extras asked)."""
    if ";" not in requirement:
        return True
    try:
        from pip._vendor.packaging.markers import Marker
    except ImportError:
        return "extra" not in requirement
    marker = Marker(requirement.split(";", 1)[1])
    environment = {"python_version": GUEST_PYTHON, "python_full_version": GUEST_PYTHON + ".0",
                   "sys_platform": "wasi", "platform_system": "WASI", "os_name": "posix",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "platform_machine": "wasm32", "extra": ""}
    try:
        return marker.evaluate(environment)
    except Exception:
        return False


def metadata_of(directory):
    """(name, version, requirements, console scripts) of the one installed distribution."""
    infos = [d for d in os.listdir(directory) if d.endswith(".dist-info")]
    if not infos:
        return None, None, [], {}
    info = os.path.join(directory, infos[0])
    name = version = None
    requirements = []
    with open(os.path.join(info, "METADATA"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            if key == "Name":
                name = value.strip()
            elif key == "Version":
                version = value.strip()
            elif key == "Requires-Dist":
                requirements.append(value.strip())
    scripts = {}
    entry_points = os.path.join(info, "entry_points.txt")
    if os.path.exists(entry_points):
        section = None
        for line in open(entry_points, encoding="utf-8"):
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif "=" in line and section == "console_scripts":
                key, _, value = line.partition("=")
                scripts[key.strip()] = value.strip()
    packages = []
    top_level = os.path.join(info, "top_level.txt")
    if os.path.exists(top_level):
        packages = [line.strip() for line in open(top_level) if line.strip()]
    else:
        record = os.path.join(info, "RECORD")
        for line in open(record, encoding="utf-8"):
            first = line.split(",")[0].split("/")[0]
            if first.endswith(".dist-info") or first.endswith(".data") or first == "..":
                continue
            first = first[:-3] if first.endswith(".py") else first
            if first and first not in packages and not first.startswith("__"):
                packages.append(first)
    return name, version, requirements, {"scripts": scripts, "packages": packages}


def native_dependencies(wanted):
    """(name, why) of the distributions that have no pure-Python wheel, found by resolving the
    requirements as for this machine (pip's report names each wheel) when resolving them for
    the sandbox failed."""
    report_path = os.path.join(args.work, "resolution.json")
    run = subprocess.run([*PIP, "install", "--quiet", "--disable-pip-version-check", "--dry-run",
                          "--ignore-installed", "--only-binary=:all:", *INDEX, "--report", report_path, *wanted],
                         capture_output=True, text=True)
    if run.returncode or not os.path.exists(report_path):
        missing = re.findall(r"No matching distribution found for ([^\s]+)", run.stdout + run.stderr)
        return [(requirement_name(m), "has no wheel on PyPI (mcpbox build installs wheels only)") for m in missing]
    with open(report_path) as f:
        resolved = json.load(f).get("install", [])
    out = []
    for item in resolved:
        wheel = item.get("download_info", {}).get("url", "").rsplit("/", 1)[-1]
        if not wheel or wheel.endswith("-none-any.whl"):
            continue
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        # This machine got a compiled wheel; the sandbox may still have a pure one.
        pure = subprocess.run([*PIP, "download", "--quiet", "--disable-pip-version-check", "--no-deps", "-d",
                               os.path.join(args.work, "probe"), *INDEX, *PIP_PURE, f"{name}=={version}"],
                              capture_output=True)
        if pure.returncode:
            out.append((normalized(name), "a native extension (no pure-Python wheel), not built for the "
                                          "sandbox's CPython"))
    return out


def requirements_of(path):
    """A requirements.txt's requirements, each by name (links outside the project refused)."""
    if not args.follow_links and not hygiene.inside(path, roots):
        report["blockers"].append({"at": "requirements.txt", "what": f"a link to {os.path.realpath(path)}",
                                   "why": hygiene.OUTSIDE})
        return []
    if args.any_requirement:
        return [line.split("#")[0].strip() for line in open(path) if line.split("#")[0].strip()
                and not line.startswith("-")]
    return hygiene.requirements_file(path, "requirements.txt", report["blockers"])


# --- 1. sources -----------------------------------------------------------------------------
work = os.path.abspath(args.work)
app = os.path.join(work, "app")
src = os.path.join(app, "server_src")
site = os.path.join(work, "site")
os.makedirs(src, exist_ok=True)
os.makedirs(site, exist_ok=True)
source = args.source
requirements, packages, scripts, entry = [], [], {}, None
# The project and the directories the user named, links resolved: what a link may point into.
roots = [os.path.realpath(p) for p in args.include]
if not source.startswith("pypi:"):
    roots.insert(0, os.path.realpath(source if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))))
if source.startswith("pypi:"):
    spec = source[5:]
    announce(f"installing {spec} (a wheel from PyPI; no build script runs)")
    by_name(spec, source)
    blocked(f"{source} is not a package of the index by name")
    status, output = pip("--no-deps", spec, target=src)
    if status:
        why = "it has no wheel (mcpbox build takes wheels only, so that nothing of it runs here)" \
            if "No matching distribution" in output else output.strip().splitlines()[-1] if output.strip() else ""
        refuse(f"pip could not install {spec}: {why}")
    name, version, requirements, extra = metadata_of(src)
    # What the wheel requires is taken by name too (an index's package may name a path).
    requirements = [r for r in requirements if by_name(r, f"{name} {version} METADATA")]
    report["package"] = {"name": name, "version": version}
    packages, scripts = extra["packages"], extra["scripts"]
    for info in [d for d in os.listdir(src) if d.endswith(".dist-info") or d.endswith(".data")]:
        shutil.rmtree(os.path.join(src, info))
    own = normalized(name or "")
    entry = scripts.get(name) or next((v for k, v in scripts.items() if normalized(k) == own), None) \
        or next(iter(scripts.values()), None)
elif os.path.isdir(source):
    announce(f"copying the project {source}")
    source = os.path.realpath(source)
    project = {}
    pyproject = os.path.join(source, "pyproject.toml")
    if os.path.exists(pyproject) and (args.follow_links or hygiene.inside(pyproject, roots)):
        with open(pyproject, "rb") as f:
            document = tomllib.load(f)
        project = document.get("project", {})
        requirements = list(project.get("dependencies", [])) if args.any_requirement \
            else hygiene.pyproject(pyproject, document, report["blockers"])
        scripts = dict(project.get("scripts", {}))
        report["package"] = {"name": project.get("name"), "version": project.get("version")}
    listed = os.path.join(source, "requirements.txt")
    if os.path.exists(listed):
        requirements += requirements_of(listed)
    base = os.path.join(source, "src") if os.path.isdir(os.path.join(source, "src")) else source
    for item in sorted(os.listdir(base)):
        path = os.path.join(base, item)
        if item.startswith(".") or item in ("tests", "test", "venv", "build", "dist", "__pycache__", "node_modules"):
            continue
        at = os.path.relpath(path, source)
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "__init__.py")):
            if hygiene.copy_entry(path, os.path.join(src, item), at, roots, report["blockers"], args.follow_links):
                packages.append(item)
        elif item.endswith(".py") and item not in ("setup.py", "conftest.py"):
            if hygiene.copy_entry(path, os.path.join(src, item), at, roots, report["blockers"], args.follow_links):
                packages.append(item[:-3])
    entry = next(iter(scripts.values()), None)
    if entry is None:
        for candidate in ("server", "main", "__main__", "app"):
            if candidate in packages:
                entry = candidate
                break
elif os.path.isfile(source) and source.endswith(".py"):
    announce(f"copying {source}")
    module = os.path.basename(source)[:-3]
    # The file the user named is the project (a link to it is theirs to make).
    shutil.copyfile(os.path.realpath(source), os.path.join(src, module + ".py"))
    packages, entry = [module], module
    text = open(source, encoding="utf-8").read()
    # PEP 723 inline metadata (`# /// script`), as `uv run` reads it.
    block = re.search(r"^# /// script\s*$(.*?)^# ///\s*$", text, re.S | re.M)
    if block:
        body = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in block.group(1).splitlines())
        metadata = tomllib.loads(body)
        first = text.count("\n", 0, block.start(1)) + 1
        for requirement in metadata.get("dependencies", []):
            at = f"{os.path.basename(source)}:{first + hygiene.line_of(block.group(1), requirement) - 1}"
            if by_name(requirement, at):
                requirements.append(requirement)
        if metadata.get("tool") and not args.any_requirement:
            report["blockers"].append({"at": f"{os.path.basename(source)}:{first}", "what": "a [tool] table",
                                       "why": hygiene.OPTION_LINE})
    beside = os.path.join(os.path.dirname(source), "requirements.txt")
    if os.path.exists(beside):
        requirements += requirements_of(beside)
else:
    refuse(f"{source}: not a Python file, a project directory or pypi:NAME==VERSION")
blocked(f"{args.source} takes what is not its own")
if not entry:
    refuse("no entry point: the package has no console script, and no server.py, main.py or __main__.py")

wanted, provided = [], []
for requirement in requirements:
    name = requirement_name(requirement)
    if not name or not applies(requirement):
        continue
    if name in PROVIDED:
        provided.append(requirement.split(";")[0].strip())
        if name == "mcp" or name == "fastmcp":
            report["sdk"] = {"package": name, "version": requirement.split(";")[0][len(name):].strip(" []cli,") or "any"}
        continue
    wanted.append(requirement.split(";")[0].strip())
if wanted:
    print(f"  dependencies: {', '.join(wanted)} (pure-Python wheels)", file=sys.stderr)
    status, output = pip(*wanted, target=site)
    if status:
        for name, why in native_dependencies(wanted):
            report["blockers"].append({"at": "dependencies", "what": name, "why": why})
        if not report["blockers"]:
            refuse(f"installing the dependencies failed: {output.strip()[-2000:]}")
# Native code that came with a wheel anyway (a pure tag on an impure wheel).
for directory, _dirs, names in os.walk(site):
    for name in names:
        if name.endswith((".so", ".pyd", ".dylib")):
            package = os.path.relpath(directory, site).split(os.sep)[0]
            report["blockers"].append({"at": os.path.relpath(os.path.join(directory, name), site),
                                       "what": package, "why": "a native extension"})
report["provided"] = provided

# --- 2. entry -------------------------------------------------------------------------------
announce(f"the entry point: {entry}")
report["entry"] = entry

# --- 3. scan --------------------------------------------------------------------------------
announce("scanning the code (environment, hosts, shims, blockers)")
imported, explicit = scan.scan_server(report, src, packages)
report.setdefault("flavour", None)
if not report["flavour"]:
    report["blockers"].append({"at": entry, "what": "no MCP SDK",
                               "why": "the code imports neither mcp.server nor fastmcp"})
for name in sorted(explicit):
    if name.split(".")[0] in ("mcp", "fastmcp"):
        layer_path = os.path.join(HERE, "layer", *name.split("."))
        if not (os.path.exists(layer_path + ".py") or os.path.isdir(layer_path)):
            report["stubs"].append({"module": name, "at": "mcpbox stands in for the SDK's server side only"})
report["stubs"] = [s for i, s in enumerate(report["stubs"])
                   if s["module"] not in {t["module"] for t in report["stubs"][:i]}]
report["notes"].append("state kept in process memory (module globals, caches) starts empty on every call: "
                       "keep what must last in a granted directory")
report["notes"].append("module-level code runs on every call, with that call's environment and arguments")
if report["blockers"]:
    print(f"error: this server cannot run in a sandbox:", file=sys.stderr)
    for blocker in report["blockers"]:
        print(f"  {blocker['at']}: {blocker['what']} ({blocker['why']})", file=sys.stderr)
    report["error"] = f"{len(report['blockers'])} blocker(s)"
    finish(2)

# --- 4. the app module ----------------------------------------------------------------------
announce("laying the compatibility layer under the server")
layer = os.path.join(work, "layer")
shutil.copytree(os.path.join(HERE, "layer"), layer, dirs_exist_ok=True)
preload = scan.closure(sorted(imported), [site])
preload = [m for m in preload if m.split(".")[0] not in set(packages) | {"mcp", "fastmcp", "pydantic", "ssl"}
           | scan.STUBBED]
stubs = sorted({s["module"].split(".")[0] for s in report["stubs"]} & scan.STUBBED)
with open(os.path.join(app, "mcpbox_app.py"), "w") as f:
    f.write(f'''"""The app module componentize-py builds: mcpbox's layer, then the server (see build.py)."""
import os
import sys

import mcpbox_compat

mcpbox_compat.boot(network={report["uses_network"]!r}, stubs={stubs!r})
mcpbox_compat.embed(os.path.join(os.path.dirname(__file__), "server_src"), {packages!r})
FAILED = mcpbox_compat.preload({preload!r})

from mcpbox_compat import bridge  # noqa: E402

bridge.ENTRY.update(target={entry!r}, name={os.path.basename(args.out)[:-5]!r})
Tools, Resources, Prompts, Completion = bridge.Tools, bridge.Resources, bridge.Prompts, bridge.Completion
''')
report["preloaded"] = len(preload)

# --- 5. componentize ------------------------------------------------------------------------
announce("componentizing (componentize-py)")
wit = os.path.join(work, "wit")
shutil.copytree(args.wit, wit, dirs_exist_ok=True)
http_import = "    import wasi:http/outgoing-handler@0.2.9;\n" if report["uses_network"] else ""
with open(os.path.join(wit, "bridged.wit"), "w") as f:
    f.write(f"""package mcpbox:plugin@0.1.4;

world bridged-python {{
    import host;
    import wasi:cli/environment@0.2.9;
{http_import}    export tools;
    export resources;
    export prompts;
    export completion;
}}
""")
# Nothing of this machine in the snapshot: module-level code runs with an empty environment.
environment = dict(os.environ) if args.with_build_environment else {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "LANG": "C.UTF-8"}
# Nor any Python library of this machine's. componentize-py puts the site-packages of a Python
# it finds on the snapshot's module path, writable: $VIRTUAL_ENV's, else those of `python3` on
# PATH (the builder's Python, whose directory the build's PATH starts with). There, a name the
# server imports that none of its dependencies provides would be imported from the builder's
# libraries and carried in the component, and a package's module-level code could write into
# them (a `.pth` file runs at every start of that Python). An empty one of the build's own.
if not args.with_builder_site:
    no_site = os.path.join(work, "no-site")
    os.makedirs(os.path.join(no_site, "lib", f"python{GUEST_PYTHON}", "site-packages"), exist_ok=True)
    environment["VIRTUAL_ENV"] = no_site
run = subprocess.run([args.componentize, "-d", wit, "-w", "bridged-python", "componentize", "mcpbox_app",
                      "-p", app, "-p", layer, "-p", site, "-o", args.out],
                     cwd=work, env=environment, capture_output=True, text=True)
if run.returncode:
    refuse(f"componentize-py failed: {(run.stdout + run.stderr).strip()[-3000:]}")
report["component_bytes"] = os.path.getsize(args.out)
finish(0)
