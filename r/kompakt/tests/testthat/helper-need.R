# Packages and files some tests need. The project's test script (scripts/test.sh) sets the
# KOMPAKT_REQUIRE_* variables: there, a missing one is a failure, not a skip.

# A suggested package: KOMPAKT_REQUIRE_<NAME> (or KOMPAKT_REQUIRE_SUGGESTS) makes it required.
need_package <- function(pkg) {
  if (requireNamespace(pkg, quietly = TRUE)) return(invisible(TRUE))
  var <- paste0("KOMPAKT_REQUIRE_", toupper(pkg))
  if (nzchar(Sys.getenv(var)) || nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) {
    stop(pkg, " is not installed (", var, " or KOMPAKT_REQUIRE_SUGGESTS is set)")
  }
  skip(paste(pkg, "is not installed"))
}

need_storr <- function() need_package("storr")
need_targets <- function() need_package("targets")

# A golden file of the repository (tests/golden/v1): from KOMPAKT_GOLDEN_DIR, else found from
# r/kompakt/tests/testthat in a checkout. Required with KOMPAKT_REQUIRE_SUGGESTS.
golden <- function(name) {
  dir <- Sys.getenv("KOMPAKT_GOLDEN_DIR", file.path("..", "..", "..", "..", "tests", "golden", "v1"))
  path <- file.path(dir, name)
  if (!file.exists(path)) {
    if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) stop("golden file not found: ", path, " (set KOMPAKT_GOLDEN_DIR)")
    skip(paste("golden file not found:", path))
  }
  path
}

# The table of bad options every front end checks (crates/kompakt-api/tests/bad_options.tsv):
# from KOMPAKT_BAD_OPTIONS, else found from r/kompakt/tests/testthat in a checkout. Required with
# KOMPAKT_REQUIRE_SUGGESTS.
bad_options_table <- function() {
  path <- Sys.getenv("KOMPAKT_BAD_OPTIONS",
                     file.path("..", "..", "..", "..", "crates", "kompakt-api", "tests", "bad_options.tsv"))
  if (!file.exists(path)) {
    if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) stop("bad options table not found: ", path, " (set KOMPAKT_BAD_OPTIONS)")
    skip(paste("bad options table not found:", path))
  }
  rows <- utils::read.delim(path, header = FALSE, comment.char = "#", quote = "", sep = "\t",
                            col.names = c("case", "options", "kind", "message"), stringsAsFactors = FALSE)
  rows
}
