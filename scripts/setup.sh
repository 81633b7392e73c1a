# Sourced by demo.sh and test.sh: makes sure a fresh machine has what the build needs.
# Rust comes from rustup on this project's machines; python3 is part of the image.
if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (rustup) first" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not found" >&2; exit 2; }
# A C compiler builds the zstd and lz4 libraries.
if ! command -v cc >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 build-essential
fi
