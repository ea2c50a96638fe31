"""The calls reference_compat.py makes on each reference server and its replacement, and what
may differ between their answers (only what is named here, each for its reason)."""

import base64
import json
import re


class Scenario:
    """A list of calls; by default every result must be equal."""

    def __init__(self, spec):
        self.spec = spec

    def prepare(self):
        """Creates the inputs both servers start from."""

    def calls(self, side):
        return []

    def normalizer(self, side):
        return lambda result: result

    def compare(self, call, theirs, ours):
        if call.get("same_error_kind"):
            # The schema validators' messages differ (zod or pydantic there, serde here);
            # both must refuse the call the same way.
            kind = lambda r: "protocol" if r.get("protocolError") else ("error" if r.get("isError") else "ok")
            return None if kind(theirs) == kind(ours) and kind(ours) != "ok" else "not refused alike"
        if call.get("protocol_error"):
            return None if theirs.get("protocolError") and ours.get("protocolError") else "not a protocol error on both"
        return None if theirs == ours else "results differ"

    def after(self):
        return []

    async def mcpbox_alone(self, session):
        """Checks of mcpbox alone, in its session after the compared calls: problems found."""
        return []


def rewrite(value, pattern, replacement):
    """`value` (any JSON) with every string rewritten by the regex."""
    return json.loads(re.sub(pattern, replacement, json.dumps(value)))


class Time(Scenario):
    def calls(self, side):
        now = lambda zone: {"tool": "get_current_time", "arguments": {"timezone": zone}}
        convert = lambda source, time, target, **extra: {
            "tool": "convert_time",
            "arguments": {"source_timezone": source, "time": time, "target_timezone": target},
            **extra,
        }
        return [
            now("UTC"),
            now("America/New_York"),
            now("Asia/Kathmandu"),
            now("Australia/Lord_Howe"),
            now("Europe/Warsaw"),
            now("europe/warsaw"),
            now("Not/AZone"),
            now(""),
            convert("America/New_York", "16:30", "Asia/Tokyo"),
            convert("Europe/London", "9:05", "Asia/Kathmandu"),
            convert("Asia/Kolkata", "23:59", "America/St_Johns"),
            convert("Australia/Adelaide", "00:00", "Pacific/Chatham"),
            convert("UTC", "12:00", "UTC"),
            convert("Etc/GMT+5", "06:15", "Etc/GMT-14"),
            convert("Europe/Paris", "25:00", "UTC"),
            convert("Europe/Paris", "12:60", "UTC"),
            convert("Europe/Paris", "noon", "UTC"),
            convert("Europe/Paris", "12:00", "Mars/Olympus"),
            convert("", "12:00", "UTC"),
            {"tool": "get_current_time", "arguments": {}, "same_error_kind": True},
            {"tool": "convert_time", "arguments": {"source_timezone": "UTC", "time": "10:00"}, "same_error_kind": True},
            {"tool": "get_current_time", "arguments": {"timezone": 5}, "same_error_kind": True},
            {"tool": "no_such_tool", "arguments": {}, "protocol_error": True},
        ]

    def normalizer(self, side):
        # The two servers run seconds apart: the current time of day may differ, nothing else.
        return lambda result: rewrite(result, r"T\d\d:\d\d:\d\d([+-]\d\d:\d\d)", r"T<now>\1") if result else result


class Thinking(Scenario):
    def calls(self, side):
        def thought(number, total, more, **extra):
            return {
                "tool": "sequentialthinking",
                "arguments": {
                    "thought": f"Thought {number}: consider the problem from angle {number}.",
                    "thoughtNumber": number,
                    "totalThoughts": total,
                    "nextThoughtNeeded": more,
                    **extra,
                },
            }

        return [
            thought(1, 3, True),
            thought(2, 3, True),
            thought(3, 3, True, needsMoreThoughts=True),
            thought(4, 3, True),
            thought(2, 5, True, isRevision=True, revisesThought=2),
            thought(3, 5, True, branchFromThought=2, branchId="alt"),
            thought(4, 5, True, branchFromThought=3, branchId="alt"),
            thought(4, 5, True, branchFromThought=2, branchId="second"),
            thought(5, 5, "false"),
            thought(6, 6, "TRUE"),
            {"tool": "sequentialthinking", "arguments": {"thought": "x", "thoughtNumber": "7", "totalThoughts": 7, "nextThoughtNeeded": False}},
            {"tool": "sequentialthinking", "arguments": {"thought": "x", "thoughtNumber": 0, "totalThoughts": 1, "nextThoughtNeeded": True}, "same_error_kind": True},
            {"tool": "sequentialthinking", "arguments": {"thought": "x", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": "maybe"}, "same_error_kind": True},
            {"tool": "sequentialthinking", "arguments": {"thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": True}, "same_error_kind": True},
            thought(8, 8, False),
        ]


class Memory(Scenario):
    """A sequence of edits on a graph seeded in the reference's file format; both files must
    end byte for byte the same, so each server reads the other's."""

    SEED = (
        '{"type":"entity","name":"Seed","entityType":"note","observations":["from an older file"]}\n'
        '{"type":"relation","from":"Seed","to":"Seed","relationType":"refers to"}'
    )

    def prepare(self):
        for path in self.spec["memory_files"].values():
            with open(path, "w") as f:
                f.write(self.SEED)

    def calls(self, side):
        call = lambda tool, **arguments: {"tool": tool, "arguments": arguments}
        entity = lambda name, kind, *observations: {"name": name, "entityType": kind, "observations": list(observations)}
        relation = lambda a, b, kind: {"from": a, "to": b, "relationType": kind}
        return [
            call("read_graph"),
            call("create_entities", entities=[entity("Ada", "person", "wrote the first program"), entity("Engine", "machine")]),
            call("create_entities", entities=[entity("Ada", "person", "duplicate"), entity("Babbage", "person"), entity("Babbage", "person", "twice in one batch")]),
            call("create_relations", relations=[relation("Ada", "Engine", "programmed"), relation("Babbage", "Engine", "designed")]),
            call("create_relations", relations=[relation("Ada", "Engine", "programmed"), relation("Ada", "Nobody", "knows")]),
            call("add_observations", observations=[{"entityName": "Ada", "contents": ["born 1815", "wrote the first program", "born 1815"]}]),
            call("add_observations", observations=[{"entityName": "Engine", "contents": ["analytical"]}, {"entityName": "Ghost", "contents": ["boo"]}]),
            call("search_nodes", query="ENGINE"),
            call("search_nodes", query="1815"),
            call("search_nodes", query="nothing matches this"),
            call("open_nodes", names=["Ada", "Ghost"]),
            call("open_nodes", names=[]),
            call("delete_observations", deletions=[{"entityName": "Ada", "observations": ["born 1815"]}, {"entityName": "Ghost", "observations": ["x"]}]),
            call("delete_relations", relations=[relation("Babbage", "Engine", "designed"), relation("No", "Such", "relation")]),
            call("delete_entities", entityNames=["Engine", "Ghost"]),
            call("read_graph"),
            {"tool": "create_entities", "arguments": {"entities": [{"name": "NoType"}]}, "same_error_kind": True},
            {"tool": "search_nodes", "arguments": {}, "same_error_kind": True},
            call("create_entities", entities=[entity("Ünïcödé ✓", "thing", "line\nbreak", "quote \" and tab \t")]),
            call("read_graph"),
        ]

    async def mcpbox_alone(self, session):
        """The two memory files are the same (the reference has finished; mcpbox's calls are
        done), then: concurrent writers never lose an update, 64 calls at once each add an
        observation."""
        import asyncio

        files = self.spec["memory_files"]
        reference, mcpbox = (open(files[side], "rb").read() for side in ("reference", "mcpbox"))
        if reference != mcpbox:
            return [f"the memory files differ:\n  reference {reference[:2000]!r}\n  mcpbox    {mcpbox[:2000]!r}"]

        await session.call_tool("create_entities", {"entities": [{"name": "Counter", "entityType": "test", "observations": []}]})
        add = lambda n: session.call_tool("add_observations", {"observations": [{"entityName": "Counter", "contents": [f"tick {n}"]}]})
        results = await asyncio.gather(*(add(n) for n in range(64)))
        failed = [r for r in results if r.is_error]
        graph = (await session.call_tool("open_nodes", {"names": ["Counter"]})).structured_content
        kept = set(graph["entities"][0]["observations"]) if graph and graph["entities"] else set()
        missing = {f"tick {n}" for n in range(64)} - kept
        if failed or missing:
            return [f"concurrent add_observations: {len(failed)} failed, lost {sorted(missing)}"]
        return []


class Filesystem(Scenario):
    """Every tool on a copy of the same tree, with host paths: the reference's tree is `T/ref`,
    mcpbox's `T/box`, and results compare with each side's root written `<root>`. Timestamps
    and permission bits in get_file_info are left out (two copies are made at different
    instants; WASI reports no permission bits, see docs/plugins/filesystem.md)."""

    def prepare(self):
        import os

        for root in self.spec["roots"].values():
            os.makedirs(os.path.join(root, "sub", "deep"))
            files = {
                "a.txt": "one\ntwo\nthree\nfour\nfive\n",
                "crlf.txt": "one\r\ntwo\r\nthree",
                "empty.txt": "",
                "café.txt": "accented name\n",
                "big.log": "x" * 3000,
                "pixel.png": bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"),
                "tone.wav": b"RIFF\x24\x00\x00\x00WAVEfmt ",
                "data.bin": bytes(range(256)),
                "sub/b.txt": "bee\n",
                "sub/.hidden": "dot file\n",
                "sub/deep/c.txt": "sea\n",
            }
            for name, content in files.items():
                mode = "wb" if isinstance(content, bytes) else "w"
                with open(os.path.join(root, name), mode, **({} if mode == "wb" else {"newline": ""})) as f:
                    f.write(content)

    def calls(self, side):
        root = self.spec["roots"][side]
        at = lambda *parts: "/".join([root, *parts])
        call = lambda tool, **arguments: {"tool": tool, "arguments": arguments}
        return [
            call("list_allowed_directories"),
            call("read_text_file", path=at("a.txt")),
            call("read_text_file", path=at("a.txt"), head=2),
            call("read_text_file", path=at("a.txt"), tail=2),
            call("read_text_file", path=at("a.txt"), head=1, tail=1),
            call("read_text_file", path=at("crlf.txt"), tail=1),
            call("read_text_file", path=at("empty.txt"), tail=3),
            call("read_text_file", path="a.txt"),
            call("read_text_file", path=at("sub", "..", "a.txt")),
            call("read_text_file", path=at("missing.txt")),
            call("read_text_file", path=at("nowhere", "x.txt")),
            call("read_text_file", path="/etc/hostname"),
            call("read_text_file", path=at("sub")),
            call("read_file", path=at("café.txt")),
            call("read_media_file", path=at("pixel.png")),
            call("read_media_file", path=at("tone.wav")),
            call("read_media_file", path=at("data.bin")),
            call("read_multiple_files", paths=[at("a.txt"), at("missing.txt"), at("sub", "b.txt")]),
            call("list_directory", path=root),
            call("list_directory", path=at("sub")),
            call("list_directory", path=at("a.txt")),
            call("list_directory_with_sizes", path=root),
            call("list_directory_with_sizes", path=root, sortBy="size"),
            call("directory_tree", path=root),
            call("directory_tree", path=root, excludePatterns=["deep", "*.png"]),
            call("search_files", path=root, pattern="**/*.txt"),
            call("search_files", path=root, pattern="*.txt", excludePatterns=["a*"]),
            call("search_files", path=root, pattern="**/nothing-*"),
            call("get_file_info", path=at("a.txt")),
            call("get_file_info", path=at("sub")),
            call("write_file", path=at("new.txt"), content="fresh\ncontent\n"),
            call("write_file", path=at("a.txt"), content="alpha\nbeta\n  gamma\ndelta\n"),
            call("read_text_file", path=at("new.txt")),
            call("write_file", path=at("nowhere", "x.txt"), content="x"),
            call("edit_file", path=at("a.txt"), edits=[{"oldText": "beta", "newText": "BETA"}], dryRun=True),
            call("edit_file", path=at("a.txt"), edits=[{"oldText": "beta", "newText": "BETA"}, {"oldText": "gamma\ndelta", "newText": "GAMMA\n  DELTA"}]),
            call("edit_file", path=at("a.txt"), edits=[{"oldText": "not there", "newText": "x"}]),
            call("edit_file", path=at("crlf.txt"), edits=[{"oldText": "two", "newText": "2"}]),
            call("read_text_file", path=at("a.txt")),
            call("create_directory", path=at("made", "deeper")),
            call("create_directory", path=at("made")),
            call("move_file", source=at("new.txt"), destination=at("made", "moved.txt")),
            call("move_file", source=at("sub", "b.txt"), destination=at("made", "moved.txt")),
            call("move_file", source=at("missing.txt"), destination=at("made", "x.txt")),
            call("list_directory", path=at("made")),
            {"tool": "read_text_file", "arguments": {}, "same_error_kind": True},
            {"tool": "read_multiple_files", "arguments": {"paths": []}, "same_error_kind": True},
            {"tool": "list_directory_with_sizes", "arguments": {"path": root, "sortBy": "date"}, "same_error_kind": True},
        ]

    def normalizer(self, side):
        root = self.spec["roots"][side]

        def normalize(result):
            text = json.dumps(result).replace(root, "<root>")
            text = re.sub(r"(created|modified|accessed): [^\\\"]*", r"\1: <time>", text)
            text = re.sub(r"permissions: \d+", "permissions: <mode>", text)
            return json.loads(text)

        return normalize


class Excel(Scenario):
    """excel-mcp-server (Python, openpyxl) built by `mcpbox build`: a workbook made, filled,
    computed, formatted, merged, copied and read back, each side in its own directory (the
    reference's `T/ref`, mcpbox's a granted directory at `T/box`), results compared with the
    root written `<root>`. The workbook's size and time stamp in its metadata are left out
    (each file is written at its own instant, and a zip holds its time), and so are errno
    numbers (WASI's differ from Linux's; the error and its text are the same)."""

    def calls(self, side):
        import os

        root = self.spec["roots"][side]
        book = os.path.join(root, "book.xlsx")
        call = lambda tool, **arguments: {"tool": tool, "arguments": arguments}
        sheet = lambda tool, **arguments: call(tool, filepath=book, **arguments)
        return [
            sheet("create_workbook"),
            sheet("create_worksheet", sheet_name="Data"),
            sheet("write_data_to_excel", sheet_name="Data",
                  data=[["Name", "Qty", "Price"], ["bolt", 4, 0.25], ["nut", 10, 0.1], ["gear ✓", 1, 12.5]]),
            sheet("read_data_from_excel", sheet_name="Data", start_cell="A1", end_cell="C4"),
            sheet("apply_formula", sheet_name="Data", cell="B5", formula="=SUM(B2:B4)"),
            sheet("validate_formula_syntax", sheet_name="Data", cell="C5", formula="=SUM(C2:C4)"),
            sheet("validate_formula_syntax", sheet_name="Data", cell="C5", formula="=SUM(C2:C4"),
            sheet("read_data_from_excel", sheet_name="Data", start_cell="A1", end_cell="C5", preview_only=True),
            sheet("format_range", sheet_name="Data", start_cell="A1", end_cell="C1", bold=True, bg_color="FFFF00"),
            sheet("merge_cells", sheet_name="Data", start_cell="E1", end_cell="F2"),
            sheet("get_merged_cells", sheet_name="Data"),
            sheet("unmerge_cells", sheet_name="Data", start_cell="E1", end_cell="F2"),
            sheet("copy_worksheet", source_sheet="Data", target_sheet="Copy"),
            sheet("rename_worksheet", old_name="Copy", new_name="Renamed"),
            sheet("insert_rows", sheet_name="Renamed", start_row=2, count=2),
            sheet("read_data_from_excel", sheet_name="Renamed", start_cell="A1", end_cell="C6"),
            sheet("delete_sheet_rows", sheet_name="Renamed", start_row=2, count=2),
            sheet("copy_range", sheet_name="Data", source_start="A1", source_end="C2", target_start="A10"),
            sheet("read_data_from_excel", sheet_name="Data", start_cell="A10", end_cell="C11"),
            sheet("create_table", sheet_name="Data", data_range="A1:C4", table_name="Parts"),
            sheet("validate_excel_range", sheet_name="Data", start_cell="A1", end_cell="C4"),
            sheet("delete_worksheet", sheet_name="Renamed"),
            sheet("get_workbook_metadata", include_ranges=True),
            sheet("read_data_from_excel", sheet_name="Nowhere"),
            call("read_data_from_excel", filepath=os.path.join(root, "missing.xlsx"), sheet_name="Data"),
            call("create_workbook", filepath="relative.xlsx"),
            {"tool": "write_data_to_excel", "arguments": {"filepath": book}, "same_error_kind": True},
            {"tool": "get_workbook_metadata", "arguments": {"filepath": book, "include_ranges": "maybe"},
             "same_error_kind": True},
        ]

    def normalizer(self, side):
        root = self.spec["roots"][side]

        def normalize(result):
            text = json.dumps(result).replace(root, "<root>")
            text = re.sub(r"'(size|modified)': [0-9.e+]+", r"'\1': <stat>", text)
            # The same error, numbered as WASI numbers it (ENOENT is 44 there, 2 on Linux).
            text = re.sub(r"\[Errno \d+\]", "[Errno <n>]", text)
            return json.loads(text)

        return normalize


ARTICLE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sandboxing MCP tools</title>
<style>body { font-family: sans-serif; }</style><script>window.analytics = {};</script>
<link rel="stylesheet" href="/site.css"></head>
<body class="post">
<header><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav><div class="brand">The <span>Example</span> Blog</div></header>
<main><article>
<h1>Why sandbox <em>your</em> tools?</h1>
<p class="lede">Every MCP server you install runs with <strong>all</strong> of your rights: it can read
<code>~/.ssh/id_ed25519</code>, talk to <a href="http://169.254.169.254/">the metadata service</a>, and
write anywhere under <code>$HOME</code>.</p>
<p>A WebAssembly component sees only what it is <i>granted</i>. Think of it as a
<abbr title="capability">cap</abbr>-based process_model with *no* ambient authority.</p>
<h2>What a grant looks like</h2>
<ul>
  <li>Directories, each read-only unless <b>writable</b>
    <ul><li>mounted at <code>/roots/&lt;name&gt;</code></li><li>or at their host path</li></ul>
  </li>
  <li>Hosts on the network, public addresses only</li>
  <li>Environment variables, one by one</li>
</ul>
<ol start="3"><li>Compile once</li><li>Cache</li><li>Run each call in a fresh instance</li></ol>
<blockquote><p>Deny by default.</p><p>Grant by name.</p></blockquote>
<pre><code>mcpbox serve --config plugins.toml \
    --root ~/project</code></pre>
<figure><img src="/diagram.png" alt="diagram"><figcaption>Figure 1: the call path</figcaption></figure>
<h3>Footnotes</h3>
<p>H<sub>2</sub>O and E = mc<sup>2</sup>, as Einstein said: <q>imagination is more important</q>.</p>
</article></main>
<footer><p>&copy; 2026 Example &mdash; all rights reserved</p></footer>
</body></html>
"""

DOCS = """<!DOCTYPE html>
<html><head><title>API reference</title></head><body>
<div id="content"><section>
<h2>Options</h2>
<table>
  <thead><tr><th>Key</th><th>Type</th><th>Default</th></tr></thead>
  <tbody>
    <tr><td><code>timeout_ms</code></td><td>integer</td><td>30000</td></tr>
    <tr><td><code>memory_mib</code></td><td>integer</td><td>256</td></tr>
    <tr><td colspan="2">both limits together</td><td>-</td></tr>
  </tbody>
</table>
<table><tr><td>no</td><td>header</td></tr><tr><td>second</td><td>row</td></tr></table>
<dl><dt>prefix</dt><dd>Put before every name.</dd><dt>roots</dt><dd>Whether the plugin sees the shared roots.
It defaults to true.</dd></dl>
<h4>Limits_and_more</h4>
<p>Line one<br>line two<br><br>A new paragraph after two breaks.</p>
<hr>
<p>After the rule.</p>
</section></div>
</body></html>
"""

NEWS = """<!DOCTYPE html>
<html><head><title>News</title></head><body>
<div class="wrapper"><div class="inner">
Bare text in a div, before any paragraph.
<div><span>Nested</span> <span>spans</span> &amp; entities&nbsp;here &mdash; and a \uFB01ne ligature, \u2460 and caf\u00e9.</div>
<aside><p>Related: <a href="/other">another story</a></p></aside>
<section><h2>Breaking</h2><p>First line.<br>Second line.<br><br><br>Third, after three breaks.</p></section>
<p>Emoji \U0001F600 survive; so does \u00a0non-breaking\u00a0space.</p>
<custom-widget><p>Unknown elements keep their text.</p></custom-widget>
<font color="red">Old font tag text.</font>
</div></div>
</body></html>
"""

FORMS = """<!DOCTYPE html>
<html><head><title>Sign up</title><noscript>Enable JavaScript</noscript></head><body>
<form action="/signup"><label>Name <input name="n"></label><button>Go</button><select><option>A</option></select></form>
<iframe src="/ad"></iframe><svg><text>vector</text></svg><template><p>hidden</p></template>
<details><summary>More</summary><p>Folded text.</p></details>
<p>The only paragraph that remains.</p>
<canvas>no canvas</canvas><video src="/v.mp4">video fallback</video>
</body></html>
"""

LIST = "<!DOCTYPE html><html><body><h1>Items</h1><ul>" + "".join(
    f"<li>Item number {n}: {'lorem ipsum ' * (n % 4 + 1)}</li>" for n in range(1, 120)
) + "</ul></body></html>"

PAGES = {
    "/article.html": ("text/html; charset=utf-8", ARTICLE),
    "/docs.html": ("text/html", DOCS),
    "/news.html": ("text/html; charset=utf-8", NEWS),
    "/forms.html": ("text/html", FORMS),
    "/list.html": ("text/html", LIST),
    "/scripts-only.html": ("text/html", "<html><head><script>a()</script></head><body><script>b()</script></body></html>"),
    "/notes.txt": ("text/plain; charset=utf-8", "Plain text notes.\n\n* not markdown\n"),
    "/data.json": ("application/json", '{"a": 1, "b": [true, null]}'),
    "/no-type": ("", "<p>untyped but <b>html</b></p>"),
    "/private/secret.html": ("text/html", "<p>secret</p>"),
    "/robots.txt": ("text/plain", "# the test site\nUser-agent: *\nDisallow: /private/\n"),
}


class Fetch(Scenario):
    """The fetch tool against a web server on loopback (this process), both servers allowed to
    reach private addresses for this test only: the pages above (articles, documentation,
    tables, lists, forms, entities, plain text, JSON) as Markdown, `max_length`, `start_index`
    and `raw`, redirects, a robots.txt that forbids a path, a missing page."""

    def prepare(self):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path
                if path.startswith("/redirect"):
                    self.send_response(302)
                    self.send_header("Location", "/article.html")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if path not in PAGES:
                    self.send_error(404)
                    return
                content_type, body = PAGES[path]
                data = body.encode("utf-8")
                self.send_response(200)
                if content_type:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def calls(self, side):
        page = lambda path, **extra: {"tool": "fetch", "arguments": {"url": self.base + path, **extra}}
        return [
            page("/article.html"),
            page("/docs.html"),
            page("/news.html"),
            page("/forms.html"),
            page("/list.html"),
            page("/scripts-only.html"),
            page("/notes.txt"),
            page("/data.json"),
            page("/no-type"),
            page("/article.html", raw=True),
            page("/list.html", max_length=700),
            page("/list.html", max_length=700, start_index=700),
            page("/list.html", start_index=4000, max_length=999999),
            page("/list.html", start_index=10**6),
            page("/redirect"),
            page("/private/secret.html"),
            page("/missing.html"),
            {**page("/article.html", max_length=0), "same_error_kind": True},
            {**page("/article.html", start_index=-1), "same_error_kind": True},
            {**page("/article.html", raw="yes"), "same_error_kind": True},
            {"tool": "fetch", "arguments": {"url": "not a url"}, "same_error_kind": True},
            {"tool": "fetch", "arguments": {}, "same_error_kind": True},
        ]

    def normalizer(self, side):
        # Two runs, one server: the port is the same; nothing to rewrite.
        return lambda result: result


class ThinkingBuilt(Thinking):
    """The reference server built unmodified by `mcpbox build` (issue 40). The same calls and
    results but for what the server keeps in process memory between calls: each call of a
    built server runs in a fresh instance, so its history starts empty every time
    (`thoughtHistoryLength` 1, no `branches`). The report of every build says so; the
    difference is named here and nothing else is left out."""

    IN_MEMORY = ("thoughtHistoryLength", "branches")

    def normalizer(self, side):
        def forget(result):
            if not result or result.get("protocolError"):
                return result
            for block in result.get("content", []):
                if block.get("type") == "text":
                    try:
                        data = json.loads(block["text"])
                    except ValueError:
                        continue
                    if isinstance(data, dict):
                        block["text"] = json.dumps({k: v for k, v in data.items() if k not in self.IN_MEMORY})
            if isinstance(result.get("structuredContent"), dict):
                result["structuredContent"] = {k: v for k, v in result["structuredContent"].items() if k not in self.IN_MEMORY}
            return result

        return forget


class Everything(Scenario):
    """@modelcontextprotocol/server-everything built unmodified by `mcpbox build` (issue 40): the
    tools whose result is the same native or sandboxed. Left out, each for its reason:
    `get-env` (it returns the process environment: the host's there, the operator's `env`
    here), `toggle-simulated-logging` and `toggle-subscriber-updates` (they start timers that
    run between calls; a built server has no process between calls), `gzip-file-as-resource`
    (it fetches from the internet), `simulate-research-query` (a task-based tool that runs on
    after its call returns)."""

    def calls(self, side):
        return [
            {"tool": "echo", "arguments": {"message": "hello from both"}},
            {"tool": "get-sum", "arguments": {"a": 2.5, "b": 40}},
            {"tool": "get-tiny-image", "arguments": {}},
            {"tool": "get-annotated-message", "arguments": {"messageType": "error"}},
            {"tool": "get-annotated-message", "arguments": {"messageType": "success", "includeImage": True}},
            {"tool": "get-annotated-message", "arguments": {"messageType": "debug"}},
            {"tool": "get-structured-content", "arguments": {"location": "Chicago"}},
            {"tool": "get-resource-links", "arguments": {"count": 4}},
            {"tool": "get-resource-reference", "arguments": {"resourceType": "Text", "resourceId": 3}},
            {"tool": "get-resource-reference", "arguments": {"resourceType": "Blob", "resourceId": 2}},
            {"tool": "trigger-long-running-operation", "arguments": {"duration": 0.3, "steps": 3}},
            {"tool": "get-sum", "arguments": {"a": "two", "b": 1}, "same_error_kind": True},
            {"tool": "echo", "arguments": {}, "same_error_kind": True},
        ]

    def normalizer(self, side):
        # Its dynamic resources say when they were made ("created at 11:25:43 PM"): the two
        # servers run seconds apart. The format must match; the time may differ.
        def when(text):
            return re.sub(r"created at \d{1,2}:\d\d:\d\d [AP]M", "created at <time>", text)

        def normalize(result):
            if not result or result.get("protocolError"):
                return result
            for block in result.get("content", []):
                resource = block.get("resource") or {}
                if "text" in resource:
                    resource["text"] = when(resource["text"])
                if "blob" in resource:
                    resource["blob"] = when(base64.b64decode(resource["blob"]).decode("utf-8", "replace"))
            return result

        return normalize


class Github(Scenario):
    """The archived @modelcontextprotocol/server-github built unmodified by `mcpbox build`,
    against a loopback stand-in of the GitHub API (github_standin.py): the same answers
    natively (its token in its environment) and sandboxed (the token set by the host at the
    door; the plugin never holds it). The test checks which token reached the stand-in."""

    def calls(self, side):
        return [
            {"tool": "search_repositories", "arguments": {"query": "mcpbox"}},
            {"tool": "search_users", "arguments": {"q": "ada"}},
            {"tool": "get_issue", "arguments": {"owner": "ada", "repo": "missing", "issue_number": 1}},
            {"tool": "search_repositories", "arguments": {}},
        ]

    def compare(self, call, theirs, ours):
        # SDK 1.0.1's low-level server answers a handler's exception with a JSON-RPC error;
        # mcpbox answers a tool's failure as the MCP spec asks for tool errors, a result with
        # isError the model reads. The same message, in the other form; nothing else differs.
        if theirs.get("protocolError") and ours.get("isError"):
            text = "".join(block.get("text", "") for block in ours.get("content", []))
            return None if text.endswith(theirs["message"]) else "not the same failure"
        return super().compare(call, theirs, ours)


class Duckduckgo(Scenario):
    """duckduckgo-mcp-server (Python, httpx and BeautifulSoup) built by `mcpbox build`, against
    a loopback stand-in of html.duckduckgo.com (duckduckgo_standin.py): searches (results, an
    ad skipped, redirect links unwrapped, limits, none found) and pages fetched (an article, a
    redirect, a missing page, slices), natively and sandboxed, with the same answers."""

    def calls(self, side):
        search = lambda query, **extra: {"tool": "search", "arguments": {"query": query, **extra}}
        fetch = lambda path, **extra: {"tool": "fetch_content",
                                       "arguments": {"url": f"https://html.duckduckgo.com{path}", **extra}}
        return [
            search("wasm sandbox"),
            search("mcpbox", max_results=2),
            search("nothing"),
            search("region", region="de-de"),
            fetch("/article"),
            fetch("/article", start_index=10, max_length=40),
            fetch("/moved"),
            fetch("/missing"),
            {"tool": "search", "arguments": {}, "same_error_kind": True},
        ]


SCENARIOS = {
    "github": Github,
    "fetch": Fetch,
    "filesystem": Filesystem,
    "time": Time,
    "sequential-thinking": Thinking,
    "sequential-thinking-built": ThinkingBuilt,
    "memory": Memory,
    "everything": Everything,
    "excel": Excel,
    "duckduckgo": Duckduckgo,
}
