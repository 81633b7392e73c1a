"""The ``kompakt`` command that ``pip install`` puts on PATH: the Rust command line itself,
linked into the extension module, so it is the same program as the ``kompakt`` binary."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    from kompakt import _core

    # As in the binary: Ctrl-C ends the process at once (Python's handler would wait for the
    # Rust code to return), and a closed pipe is an error Rust reports, not a signal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_core.run_cli(["kompakt", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
