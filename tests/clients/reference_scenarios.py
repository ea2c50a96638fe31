"""The calls reference_compat.py makes on each reference server and its replacement, and what
may differ between their answers (only what is named here, each for its reason)."""

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
        done), then: concurrent writers never lose an update, 24 calls at once each add an
        observation."""
        import asyncio

        files = self.spec["memory_files"]
        reference, mcpbox = (open(files[side], "rb").read() for side in ("reference", "mcpbox"))
        if reference != mcpbox:
            return [f"the memory files differ:\n  reference {reference[:2000]!r}\n  mcpbox    {mcpbox[:2000]!r}"]

        await session.call_tool("create_entities", {"entities": [{"name": "Counter", "entityType": "test", "observations": []}]})
        add = lambda n: session.call_tool("add_observations", {"observations": [{"entityName": "Counter", "contents": [f"tick {n}"]}]})
        results = await asyncio.gather(*(add(n) for n in range(24)))
        failed = [r for r in results if r.is_error]
        graph = (await session.call_tool("open_nodes", {"names": ["Counter"]})).structured_content
        kept = set(graph["entities"][0]["observations"]) if graph and graph["entities"] else set()
        missing = {f"tick {n}" for n in range(24)} - kept
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


SCENARIOS = {"filesystem": Filesystem, "time": Time, "sequential-thinking": Thinking, "memory": Memory}
