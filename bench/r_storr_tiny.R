# storr with tiny values: kompakt's storr driver against storr_rds, per key, in one R process.
#
#   R_LIBS=target/R-library:$HOME/R-vendor Rscript bench/r_storr_tiny.R [N]
#
# Sets N (default 2000) keys of one double each, then gets them through a fresh storr (no
# object cache), and times the driver's own calls (get_hash, get_object) apart from storr's R
# code around them, which is the same for every driver. Two rounds each, printed as they come;
# a quick check of the issue's "tiny keys set/get at most 0.5x storr_rds's times", not a
# report (bench/r_objects.R's "tiny" scenario times whole processes).
suppressMessages({
  library(storr)
  library(kompakt)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args)) as.integer(args[[1]]) else 2000L
set.seed(3)
x <- lapply(seq_len(n), function(i) runif(1))
keys <- paste0("k", seq_len(n))
per_key_us <- function(f) {
  t0 <- proc.time()[["elapsed"]]
  f()
  (proc.time()[["elapsed"]] - t0) / n * 1e6
}
open <- function(method, dir) if (method == "storr_rds") storr_rds(dir, compress = FALSE) else storr_kompakt(dir)
cat(sprintf("%d keys; R %s, storr %s, kompakt %s\n", n, getRversion(), packageVersion("storr"), packageVersion("kompakt")))
for (round in 1:2) {
  for (method in c("storr_rds", "storr_kompakt")) {
    dir <- tempfile()
    st <- open(method, dir)
    set <- per_key_us(function() for (i in seq_len(n)) st$set(keys[[i]], x[[i]]))
    fresh <- open(method, dir)
    get <- per_key_us(function() for (k in keys) fresh$get(k))
    driver <- open(method, dir)$driver
    hashes <- character(n)
    get_hash <- per_key_us(function() for (i in seq_len(n)) hashes[[i]] <<- driver$get_hash(keys[[i]], "objects"))
    get_object <- per_key_us(function() for (h in hashes) driver$get_object(h))
    cat(sprintf("round %d %-13s set %6.1f us  get %6.1f us  (driver: get_hash %5.1f + get_object %5.1f us)\n",
                round, method, set, get, get_hash, get_object))
    unlink(dir, recursive = TRUE)
  }
}
