# Sourced by demo.sh and test.sh (from the repository's root): makes sure a fresh machine has
# what the build needs, and puts the project's Python in a virtual environment, .venv/.
# Rust comes from rustup on this project's machines; python3 is part of the image.
#
# Afterwards $PY is the venv's interpreter; .venv/bin is also first on PATH (exported), so
# `python3`, `pip` and the tools installed into the venv are its own. Debian's python3 refuses
# `pip install` outside a venv (PEP 668), and the global interpreter is never touched.

# apt-get, as the project's machines want it: one `apt-get update`, then one install at a time.
_kompakt_apt_updated=0
kompakt_apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: please install $* (needs root and apt-get)" >&2
    return 1
  fi
  if [ "$_kompakt_apt_updated" = 0 ]; then
    echo "setup: apt-get update"
    apt-get update -qq
    _kompakt_apt_updated=1
  fi
  echo "setup: apt-get install $*"
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 "$@"
}

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (rustup) first" >&2; exit 2; }
# A C compiler builds the zstd and lz4 libraries.
if ! command -v cc >/dev/null 2>&1; then
  kompakt_apt_install build-essential
fi

# --- Python: the project's virtual environment ---------------------------------------------
# The base interpreter: Debian's own when there is one (other pythons, such as a pyenv shim,
# may come first on PATH), else whatever python3 is on PATH. KOMPAKT_PYTHON overrides it.
if [ -n "${KOMPAKT_PYTHON:-}" ]; then
  _kompakt_base="$KOMPAKT_PYTHON"
elif [ -x /usr/bin/python3 ]; then
  _kompakt_base=/usr/bin/python3
else
  _kompakt_base="$(command -v python3 || true)"
fi
[ -n "$_kompakt_base" ] || { echo "python3 not found" >&2; exit 2; }
_kompakt_py_ok='import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'
if ! "$_kompakt_base" -c "$_kompakt_py_ok"; then
  echo "setup: $_kompakt_base is Python $("$_kompakt_base" -c 'import platform; print(platform.python_version())');" \
    "kompakt needs Python >= 3.11 (set KOMPAKT_PYTHON to another interpreter)" >&2
  exit 2
fi

VENV="$PWD/.venv"
PY="$VENV/bin/python"
# An existing venv is kept if its interpreter runs, is new enough and has pip; a half-made one
# (say, from a `python3 -m venv` that failed for want of python3-venv) is made again.
if ! { [ -x "$PY" ] && "$PY" -c "$_kompakt_py_ok" && "$PY" -m pip --version; } >/dev/null 2>&1; then
  echo "setup: creating the virtual environment $VENV (from $_kompakt_base, Python $("$_kompakt_base" -c 'import platform; print(platform.python_version())'))"
  rm -rf "$VENV"
  if ! "$_kompakt_base" -m venv "$VENV"; then
    # Debian ships venv and ensurepip in a separate package.
    rm -rf "$VENV"
    echo "setup: '$_kompakt_base -m venv' failed; installing Debian's python3-venv"
    kompakt_apt_install python3-venv || exit 2
    "$_kompakt_base" -m venv "$VENV" || { echo "setup: could not create $VENV" >&2; exit 2; }
  fi
  "$PY" -m pip --version >/dev/null || { echo "setup: $VENV has no pip" >&2; exit 2; }
fi
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
unset PYTHONHOME
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Every pip install in the venv (and maturin's build environment) takes its versions from one
# lock, resolved together for the tests, lints, benchmarks and fuzz run: a fresh machine gets
# the set that was tested, not whatever the index serves that day. Refresh it on purpose with
# scripts/lock_python.sh.
export PIP_CONSTRAINT="$PWD/python/constraints.txt"
echo "setup: Python $("$PY" -c 'import platform; print(platform.python_version())') in $VENV"

# --- R: the R package (r/kompakt), for test.sh and demo.sh ----------------------------------
# Installs R and the Debian packages the package and its tests use when missing, storr and
# targets (from ../shared/vendor, when there) into a private library, $1/R-library (cargo's
# target folder; KOMPAKT_R_LIBRARY chooses another, such as R's own user library, the first of
# `Rscript -e '.libPaths()'`), then, unless $2 is "deps", the package from the checkout, built
# by cargo in that target folder (nothing recompiles after `cargo build --release`).
# Afterwards $R_LIBRARY is that library; R finds the package there with R_LIBS=$R_LIBRARY.
kompakt_r_setup() {
  local vendor=../shared/vendor storr targets
  storr="$(ls "$vendor"/storr_*.tar.gz 2>/dev/null | head -n 1 || true)"
  targets="$(ls "$vendor"/targets_*.tar.gz 2>/dev/null | head -n 1 || true)"
  # data.table, bit64 and tibble: the table tests' data.table keys, integer64 and tibbles;
  # withr: the tests' temporary folders; the rest: what targets imports beyond those.
  local debs="r-base-dev r-cran-testthat r-cran-withr r-cran-r6 r-cran-digest r-cran-data.table r-cran-bit64 r-cran-tibble"
  local libs="testthat withr R6 digest data.table bit64 tibble"
  if [ -n "$targets" ]; then
    debs="$debs r-cran-base64url r-cran-callr r-cran-cli r-cran-codetools r-cran-igraph r-cran-knitr"
    debs="$debs r-cran-rlang r-cran-tidyselect r-cran-vctrs r-cran-yaml"
    libs="$libs base64url callr cli codetools igraph knitr rlang tidyselect vctrs yaml"
  fi
  if ! command -v Rscript >/dev/null 2>&1 ||
    ! Rscript -e "for (p in strsplit('$libs', ' ')[[1]]) library(p, character.only = TRUE)" >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    kompakt_apt_install --no-install-recommends $debs
  fi
  R_LIBRARY="${KOMPAKT_R_LIBRARY:-$1/R-library}"
  mkdir -p "$R_LIBRARY"
  R_LIBRARY="$(cd "$R_LIBRARY" && pwd)"
  # storr (the storr driver's tests) and targets (a real pipeline) are not in Debian.
  if [ -n "$storr" ] && ! R_LIBS="$R_LIBRARY" Rscript -e 'library(storr)' >/dev/null 2>&1; then
    R CMD INSTALL -l "$R_LIBRARY" "$storr"
  fi
  if [ -n "$targets" ] && ! R_LIBS="$R_LIBRARY" Rscript -e 'library(targets)' >/dev/null 2>&1; then
    R CMD INSTALL -l "$R_LIBRARY" "$targets"
  fi
  if [ "${2:-}" != deps ]; then
    CARGO_TARGET_DIR="$1" R CMD INSTALL --preclean --no-multiarch -l "$R_LIBRARY" r/kompakt
    echo "setup: kompakt for R is installed in $R_LIBRARY: run R with R_LIBS=$R_LIBRARY to use it"
  fi
}

# --- the JVM: Java 17+ and Maven (the jar of java/, over crates/kompakt-jni) ----------------
# kompakt_jar TARGET_DIR [MAVEN GOALS...]: builds the JNI library in the cargo profile
# KPK_PROFILE (default release), strips its debug information into TARGET_DIR/PROFILE/jni/ (the
# jar carries that copy: 13 MB instead of 130), runs Maven on java/pom.xml with the goals
# (default: package without tests) and copies the jar into the Python package
# (python/kompakt/jars/), where `kompakt.spark.jar_path()` finds it and `pip install .` ships it.
# Maven downloads its plugins and Spark (provided scope, for the tests) into ~/.m2 the first time.
kompakt_jar() {
  local target="$1" profile="${KPK_PROFILE:-release}"
  shift
  if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
    kompakt_apt_install --no-install-recommends openjdk-17-jdk-headless maven
  fi
  cargo build -p kompakt-jni --profile "$profile" --locked
  mkdir -p "$target/$profile/jni"
  strip --strip-debug -o "$target/$profile/jni/libkompakt_jni.so" "$target/$profile/libkompakt_jni.so"
  if [ "$#" = 0 ]; then set -- package -DskipTests; fi
  mvn -B -ntp -f java/pom.xml -Dkompakt.native.lib="$target/$profile/jni/libkompakt_jni.so" "$@"
  mkdir -p python/kompakt/jars
  rm -f python/kompakt/jars/kompakt-*.jar
  cp java/target/kompakt-*.jar python/kompakt/jars/
  KOMPAKT_JAR="$(ls "$PWD"/python/kompakt/jars/kompakt-*.jar)"
  export KOMPAKT_JAR
}
