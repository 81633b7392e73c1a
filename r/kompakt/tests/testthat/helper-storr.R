# CI sets KOMPAKT_REQUIRE_STORR: there, a missing storr is a failure, not a skip.
need_storr <- function() {
  if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_STORR"))) {
    if (!requireNamespace("storr", quietly = TRUE)) stop("storr is not installed (KOMPAKT_REQUIRE_STORR is set)")
  } else {
    skip_if_not_installed("storr")
  }
}
