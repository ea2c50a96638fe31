"""What a Python project may bring into its component: its own files and wheels pip installs by
name from the index, nothing else of the build machine. Each refusal is a blocker of the report
(`at`: the project's file and line, `what`, `why`), all found before anything is installed:

- a link is followed only when it resolves inside the project (or a directory the user named
  with --include); the staged copy holds its content, never a link;
- a requirement is a name with a version specifier: a direct reference (`name @ URL`), a path,
  a URL, a VCS link or an option line (`-r`, `-e`, `--index-url`, ...) would make pip read a
  file of this machine, reach an index the user did not choose, or build a package here (its
  setup.py or build backend: code nobody sandboxed), in requirements.txt, PEP 723 metadata,
  pyproject.toml (dependencies and path or git sources) and a wheel's own Requires-Dist.
"""

import os
import re
import shutil

OUTSIDE = ("outside the project: mcpbox build takes only the project's own files and wheels from the "
           "index (name a directory with --include DIR to take it)")
NOT_BY_NAME = ("pip would take it from a path, a URL or a repository (and build it here, running its "
               "setup.py or build backend): mcpbox build installs wheels by name from the index")
OPTION_LINE = ("an option line: mcpbox build takes requirements by name; the index is chosen on its command "
               "line (--index-url URL, --find-links DIR)")
# A requirement by name: NAME[extras] specifiers ; marker. Nothing else.
# (Specifiers may stand in parentheses, as older wheels' Requires-Dist writes them.)
SPECIFIER = r"(~=|==|!=|<=|>=|<|>|===)\s*[A-Za-z0-9.*+!_-]+\s*"
BY_NAME = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[A-Za-z0-9._,\s-]*\])?\s*"
                     rf"(\(?\s*{SPECIFIER}(,\s*{SPECIFIER})*\)?)?\s*(;.*)?$")


def inside(path, roots):
    """Whether `path`, links resolved, is one of `roots` (resolved) or under one."""
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in roots)


def copy_entry(path, target, at, roots, blockers, follow_links=False):
    """Copies a project file or package directory as files only; True if copied. A link inside
    `roots` is copied as what it points at, one outside is a blocker, so is anything but a file
    or a directory."""
    if follow_links:
        if os.path.isdir(path):
            shutil.copytree(path, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(path, target)
        return True
    if os.path.islink(path) and not inside(path, roots):
        blockers.append({"at": at, "what": f"a link to {os.path.realpath(path)}", "why": OUTSIDE})
        return False
    real = os.path.realpath(path)
    if os.path.isfile(real):
        shutil.copyfile(real, target)
        return True
    if not os.path.isdir(real):
        blockers.append({"at": at, "what": "neither a file nor a directory",
                         "why": "mcpbox build copies only files and directories"})
        return False
    os.makedirs(target, exist_ok=True)
    copied = True
    for name in sorted(os.listdir(path)):
        if name == "__pycache__" or name.endswith(".pyc"):
            continue
        copied &= copy_entry(os.path.join(path, name), os.path.join(target, name), f"{at}/{name}", roots, blockers)
    return copied


def check(text, at, blockers):
    """The requirement `text` if pip may take it by name, else None (and a blocker)."""
    requirement = text.split(" #")[0].strip()
    if requirement.startswith("-"):
        blockers.append({"at": at, "what": requirement, "why": OPTION_LINE})
        return None
    if not BY_NAME.match(requirement) or "://" in requirement or "@" in requirement.split(";")[0]:
        blockers.append({"at": at, "what": requirement, "why": NOT_BY_NAME})
        return None
    return requirement


def requirements_file(path, at_name, blockers):
    """The requirements of a requirements.txt, each checked, named `at_name:LINE`."""
    found = []
    lines = open(path, encoding="utf-8").read().splitlines()
    number = 0
    while number < len(lines):
        start = number + 1
        line = lines[number]
        # A continued line (`\` at its end) is one requirement, named by its first line.
        while line.rstrip().endswith("\\") and number + 1 < len(lines):
            number += 1
            line = line.rstrip()[:-1] + " " + lines[number]
        number += 1
        text = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
        if text:
            checked = check(text, f"{at_name}:{start}", blockers)
            if checked:
                found.append(checked)
    return found


def line_of(text, needle):
    """The 1-based line of `text` where `needle` first appears (1 if nowhere)."""
    at = text.find(needle)
    return 1 if at < 0 else text.count("\n", 0, at) + 1


def pyproject(path, document, blockers):
    """The [project] dependencies of a pyproject.toml, checked; its path and git sources refused."""
    text = open(path, encoding="utf-8").read()
    found = []
    for requirement in document.get("project", {}).get("dependencies", []):
        checked = check(requirement, f"pyproject.toml:{line_of(text, requirement)}", blockers)
        if checked:
            found.append(checked)
    tool = document.get("tool", {})
    sources = dict(tool.get("uv", {}).get("sources", {}))
    for name, spec in tool.get("poetry", {}).get("dependencies", {}).items():
        if isinstance(spec, dict):
            sources[name] = spec
    for name, spec in sources.items():
        entries = spec if isinstance(spec, list) else [spec]
        for entry in entries:
            if isinstance(entry, dict) and {"path", "git", "url", "workspace"} & set(entry):
                # The line that sets it (a key at the start of a line), not a mention before.
                defined = re.search(rf"^\s*\"?{re.escape(name)}\"?\s*=", text, re.M)
                line = text.count("\n", 0, defined.start()) + 1 if defined else 1
                blockers.append({"at": f"pyproject.toml:{line}", "what": f"{name} = {entry}", "why": NOT_BY_NAME})
    for key in ("index", "find-links", "index-url", "extra-index-url"):
        if key in tool.get("uv", {}):
            blockers.append({"at": f"pyproject.toml:{line_of(text, key)}", "what": f"[tool.uv] {key}",
                             "why": OPTION_LINE})
    return found


def scrub_installed(site):
    """What pip leaves beside the wheels that names this machine: console scripts (their
    shebang is this machine's Python), `direct_url.json` (where a wheel came from) and `.pth`
    files (nothing in the sandbox reads them)."""
    shutil.rmtree(os.path.join(site, "bin"), ignore_errors=True)
    for directory, _dirs, names in os.walk(site):
        for name in names:
            if name == "direct_url.json" or name.endswith(".pth"):
                os.remove(os.path.join(directory, name))
