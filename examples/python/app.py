"""An mcpbox plugin in Python: tools, a resource, a resource template and a prompt, each a
decorated function (see mcpbox.py for what the decorators derive from type hints)."""

from dataclasses import dataclass
from typing import Literal

import mcpbox
from mcpbox import Plugin

plugin = Plugin()


@plugin.tool(read_only=True)
def greet(name: str, style: Literal["plain", "excited"] = "plain") -> str:
    """Greets someone by name.

    Args:
        name: Who to greet.
        style: How enthusiastic the greeting is.
    """
    return f"Hello, {name}" + ("!" if style == "excited" else ".")


@dataclass
class Counts:
    lines: int
    words: int
    characters: int


@plugin.tool(read_only=True)
def count(text: str) -> Counts:
    """Counts the lines, words and characters of a text.

    Args:
        text: The text to count.
    """
    return Counts(lines=len(text.splitlines()), words=len(text.split()), characters=len(text))


@plugin.tool(read_only=True)
def head(path: str, lines: int = 5) -> str:
    """Returns the first lines of a file in a directory the operator or the client granted.

    Args:
        path: The file's path inside the sandbox, e.g. /roots/project/README.md.
        lines: How many lines to return.
    """
    if lines < 1:
        raise mcpbox.InvalidArguments("`lines` must be at least 1")
    mcpbox.log(mcpbox.LogLevel.DEBUG, f"reading {path}")
    with open(path, encoding="utf-8") as file:
        return "".join(line for _, line in zip(range(lines), file))


@plugin.resource("python://about")
def about() -> str:
    """What this plugin is."""
    return "An mcpbox plugin written in Python and built with componentize-py."


@plugin.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for anyone, by URI."""
    return f"Hello, {name}."


@plugin.prompt
def review(code: str, focus: str = "correctness") -> str:
    """Asks the model to review a piece of code.

    Args:
        code: The code to review.
        focus: What to look at first.
    """
    return f"Review this code, looking at {focus} first:\n\n{code}"


Tools, Resources, Prompts, Completion = plugin.exports()
