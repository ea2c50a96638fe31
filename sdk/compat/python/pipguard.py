"""pip, unable to run a package's own code: `python pipguard.py install ...` is `python -m pip
install ...`, except that the two ways pip runs a package's build code on this machine (a PEP 517
build backend's hooks, and `setup.py` and VCS commands as subprocesses) end the run with an
error naming the reason instead. mcpbox build installs wheels only (`--only-binary=:all:`, and
requirements by name: hygiene.py); this guard holds where those would not (a dependency of a
dependency named by a path, a sdist pip chose anyway).

`--with-build-backends` (only the test suite's mcpbox passes it, to prove a test guards this)
runs pip as it is.
"""

import os
import sys

REFUSED = ("error: pip would run a package's build code on this machine (its setup.py, build backend "
           "or a VCS command): mcpbox build installs wheels only")


def refuse(*_args, **_kwargs):
    # At once: pip would catch an exception and go on to its next candidate (the temporary
    # files it leaves are in the build's own directory, removed with it).
    print(REFUSED, file=sys.stderr, flush=True)
    os._exit(3)


def guarded():
    """Replaces pip's two doors to a package's code, before pip's command modules import them."""
    import pip._vendor.pyproject_hooks._impl as hooks
    import pip._internal.utils.subprocess as subprocesses

    hooks.BuildBackendHookCaller._call_hook = refuse
    subprocesses.call_subprocess = refuse


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if "--with-build-backends" in arguments:
        arguments.remove("--with-build-backends")
    else:
        guarded()
    from pip._internal.cli.main import main

    sys.exit(main(arguments))
