"""The ``kompakt`` command that pip installs is the Rust command line itself."""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import kompakt


def _installed_command() -> str:
    scripts = Path(sysconfig.get_path("scripts"))
    found = scripts / "kompakt"
    assert found.exists(), f"pip install put no kompakt command in {scripts}"
    return str(found)


def test_pip_install_puts_the_command_on_path(tmp_path):
    command = _installed_command()
    data = tmp_path / "data.bin"
    data.write_bytes(b"kompakt " * 50_000)
    run = subprocess.run([command, "compress", str(data), "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert kompakt.decompress((tmp_path / "data.bin.kpk").read_bytes()) == data.read_bytes()
    # The same exit codes as the binary: 1 for damaged data, 2 for usage errors.
    packed = bytearray((tmp_path / "data.bin.kpk").read_bytes())
    packed[len(packed) // 2] ^= 1
    (tmp_path / "bad.kpk").write_bytes(bytes(packed))
    assert subprocess.run([command, "verify", str(tmp_path / "bad.kpk")], capture_output=True).returncode == 1
    usage = subprocess.run([command, "compress", str(data), "--codec", "brotli"], capture_output=True, text=True)
    assert usage.returncode == 2 and "lz4hc" in usage.stderr
    shown = subprocess.run([command, "--version"], capture_output=True, text=True)
    assert shown.returncode == 0 and kompakt.__version__ in shown.stdout


def test_the_command_matches_the_cargo_binary(tmp_path, cli):
    binary = str(cli)
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 4096)
    for name, program in (("a.kpk", _installed_command()), ("b.kpk", binary)):
        subprocess.run([program, "compress", str(data), "-q", "-o", str(tmp_path / name)], check=True)
    assert (tmp_path / "a.kpk").read_bytes() == (tmp_path / "b.kpk").read_bytes()
