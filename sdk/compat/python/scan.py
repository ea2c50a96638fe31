"""What `mcpbox build` reads from a Python server's code before building it (with `ast`, none
of the code runs): the SDK flavour, the environment variables and hosts it names, the shims
and stubs it will use, what cannot work in a sandbox (blockers, each with file and line), the
state it keeps between calls, and every module its code imports (also inside functions: the
build imports them all while it builds, as componentize-py's CPython finds no files later)."""

import ast
import os
import re
import sys

# Imports that cannot work in a plugin, and why.
BLOCKING_IMPORTS = {
    "playwright": "drives a browser (a separate process)",
    "selenium": "drives a browser (a separate process)",
    "pyppeteer": "drives a browser (a separate process)",
    "multiprocessing": "starts processes",
    "ctypes": "loads native libraries",
    "cffi": "loads native libraries",
    "psutil": "a native extension that reads the machine's processes",
}
# Calls that cannot work, and why (a module prefix, the attribute).
BLOCKING_CALLS = {
    ("subprocess", None): "starts a process (`child_process`)",
    ("os", "system"): "starts a process (a shell)",
    ("os", "popen"): "starts a process (a shell)",
    ("os", "fork"): "starts a process",
    ("os", "execv"): "replaces the process",
    ("os", "execvp"): "replaces the process",
    ("socket", "socket"): "opens a raw socket (only HTTP leaves a plugin, through the host)",
    ("socket", "create_connection"): "opens a raw socket (only HTTP leaves a plugin, through the host)",
    ("threading", "Thread"): "starts a thread (a plugin has one)",
    ("concurrent.futures", "ThreadPoolExecutor"): "starts threads (a plugin has one)",
    ("concurrent.futures", "ProcessPoolExecutor"): "starts processes",
    ("asyncio", "create_subprocess_exec"): "starts a process",
    ("asyncio", "create_subprocess_shell"): "starts a process (a shell)",
}
# HTTP server frameworks a server imports for its network transports: stubs that throw when
# called (the stdio path never calls them).
STUBBED = {"starlette", "uvicorn", "sse_starlette", "fastapi", "hypercorn"}
HTTP_CLIENTS = {"httpx": "httpx (over wasi:http)", "requests": "requests (over wasi:http)",
                "urllib.request": "urllib (over wasi:http)", "urllib3": "urllib3 (over wasi:http, through requests)",
                "aiohttp": None}
# The only part of pydantic a server may use without its native core.
PYDANTIC_SUBSET = {"Field"}
FLAVOURS = [("mcp.server.mcpserver", "MCPServer (SDK v2)"), ("mcp.server.fastmcp", "FastMCP"),
            ("fastmcp", "fastmcp (standalone)"), ("mcp.server.lowlevel", "low-level Server"),
            ("mcp.server", "low-level Server")]
URL = re.compile(r"^(https?)://([A-Za-z0-9.-]+\.[A-Za-z]{2,})(:\d+)?(/|$)")
WRITE_CALLS = {"save", "write_text", "write_bytes", "makedirs", "mkdir", "remove", "unlink", "rename", "rmtree",
               "to_excel", "to_csv", "dump"}


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Scan(ast.NodeVisitor):
    def __init__(self, report, path, module, is_package):
        self.report, self.path, self.module, self.is_package = report, path, module, is_package
        self.aliases = {}  # local name -> module or module.attribute
        self.depth = 0  # inside a function
        self.modules = set()
        self.explicit = set()  # names that are modules (not names imported from one)

    def at(self, node):
        return f"{self.path}:{node.lineno}"

    def note(self, text):
        if text not in self.report["notes"]:
            self.report["notes"].append(text)

    def add(self, key, item):
        if not any(i.get(k) == item.get(k) for i in self.report[key] for k in ("name", "origin", "module", "what")
                   if k in item):
            self.report[key].append(item)

    # --- imports -------------------------------------------------------------------------
    def _imported(self, name, node):
        self.modules.add(name)
        self.explicit.add(name)
        top = name.split(".")[0]
        if top in BLOCKING_IMPORTS:
            self.add("blockers", {"at": self.at(node), "what": name, "why": BLOCKING_IMPORTS[top]})
        if top in STUBBED:
            self.add("stubs", {"module": top, "at": self.at(node)})
        for prefix, flavour in FLAVOURS:
            if (name == prefix or name.startswith(prefix + ".")) and not self.report.get("flavour"):
                self.report["flavour"] = flavour
        for client, shim in HTTP_CLIENTS.items():
            if name == client or name.startswith(client + "."):
                self.report["uses_network"] = True
                if shim:
                    self.add("shims", {"module": shim, "at": self.at(node)})
                    self.add("shims", {"module": "ssl (TLS by the host)", "at": self.at(node)})
                else:
                    self.add("blockers", {"at": self.at(node), "what": client,
                                          "why": "opens its own sockets (use httpx, requests or urllib)"})

    def visit_Import(self, node):
        for alias in node.names:
            self._imported(alias.name, node)
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.module.split(".")
            base = base if self.is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        self._imported(name, node)
        for alias in node.names:
            self.modules.add(f"{name}.{alias.name}")
            self.aliases[alias.asname or alias.name] = f"{name}.{alias.name}"
            if name.split(".")[0] == "pydantic" and alias.name not in PYDANTIC_SUBSET:
                self.pydantic(node, f"pydantic.{alias.name}" if name == "pydantic" else f"{name}.{alias.name}")
        self.generic_visit(node)

    def pydantic(self, node, what):
        self.add("blockers", {"at": self.at(node), "what": "pydantic-core",
                              "why": f"uses {what}: real pydantic, whose core (pydantic-core, Rust) has no build "
                                     "for the sandbox's CPython; mcpbox stands in for pydantic.Field only"})

    # --- functions (depth) and state -----------------------------------------------------
    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    # --- calls, names, constants -----------------------------------------------------------
    def resolve(self, node):
        name = dotted(node)
        if not name:
            return None
        head, _, rest = name.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def visit_Call(self, node):
        name = self.resolve(node.func) or ""
        for (module, attribute), why in BLOCKING_CALLS.items():
            target = f"{module}.{attribute}" if attribute else module + "."
            if name == target or (attribute is None and name.startswith(target)):
                self.add("blockers", {"at": self.at(node), "what": name, "why": why})
        if name in ("os.getenv", "os.environ.get", "environ.get", "os.environ.setdefault") and node.args:
            self.env(node.args[0], node)
        if name.startswith("pydantic.") and name != "pydantic.Field":
            self.pydantic(node, name)
        if name in ("asyncio.to_thread",) or name.endswith("run_in_executor"):
            self.add("shims", {"module": "asyncio executors (run inline)", "at": self.at(node)})
        if name in ("asyncio.create_task", "asyncio.ensure_future") and self.depth:
            self.note(f"{self.at(node)}: a background task ends with the call that started it")
        if name in ("logging.FileHandler", "logging.handlers.RotatingFileHandler"):
            self.add("shims", {"module": "logging.FileHandler (the host's log when the file is not granted)",
                               "at": self.at(node)})
        attribute = node.func.attr if isinstance(node.func, ast.Attribute) else name
        if name == "open" or attribute == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                self.report["writes_files"] = True
        elif attribute in WRITE_CALLS:
            self.report["writes_files"] = True
        if attribute in ("add_tool", "remove_tool") and self.depth:
            self.note(f"{self.at(node)}: tools registered while a call runs are gone at the next call "
                      "(each call starts from the server's module-level code)")
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if self.resolve(node.value) in ("os.environ", "environ"):
            self.env(node.slice, node)
        self.generic_visit(node)

    def env(self, key, node):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.add("environment", {"name": key.value, "at": self.at(node)})

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            match = URL.match(node.value)
            if match and match.group(2) not in ("localhost", "example.com", "www.example.com"):
                port = match.group(3) or ""
                self.add("hosts", {"origin": f"{match.group(1)}://{match.group(2)}{port}", "at": self.at(node)})


def module_files(root):
    """(module name, path, is_package) of every .py file under `root`."""
    out = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "tests", "test") and not d.endswith(".dist-info")]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                is_package = name == "__init__.py"
                out.append((relative[: -len(".__init__")] if is_package else relative, path, is_package))
    return out


def scan_server(report, root, packages):
    """Scans the server's own modules; returns every name they import (modules and names from
    modules) and the names that are modules."""
    imported, explicit = set(), set()
    for package in packages:
        for module, path, is_package in module_files(root):
            if module != package and not module.startswith(package + "."):
                continue
            if module.split(".")[-1].startswith("test_") or ".tests." in f".{module}.":
                continue
            try:
                tree = ast.parse(open(path, "rb").read(), path)
            except SyntaxError as error:
                report["notes"].append(f"{os.path.relpath(path, root)}: not parsed ({error.msg})")
                continue
            visitor = Scan(report, os.path.relpath(path, root), module, is_package)
            visitor.visit(tree)
            imported |= visitor.modules
            explicit |= visitor.explicit
    return imported, explicit


def closure(names, roots, limit=4000):
    """Every module `names` lead to through imports in the sources under `roots` (the server's
    dependencies; modules elsewhere, the standard library's, are listed but not followed)."""
    index = {}
    for root in roots:
        for module, path, is_package in module_files(root):
            index.setdefault(module, (path, is_package))
    seen, pending = set(), list(names)
    while pending and len(seen) < limit:
        name = pending.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name not in index:
            continue
        path, is_package = index[name]
        try:
            tree = ast.parse(open(path, "rb").read(), path)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                pending.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                pending.append(module)
                pending.extend(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
    # Parents before children, so a failing parent is tried once.
    return sorted((n for n in seen if n and not n.startswith("_pytest")), key=lambda n: (n.count("."), n))


if __name__ == "__main__":
    import json
    report = {"blockers": [], "shims": [], "stubs": [], "environment": [], "hosts": [], "notes": []}
    print(json.dumps(sorted(scan_server(report, sys.argv[1], sys.argv[2:])[0])[:50]), json.dumps(report, indent=1))
