# kompakt for R on object storage: stores, storr and files on S3 against the same on disk.
#
#   Rscript bench/r_remote.R [--quick] [--repeats N] [--out bench/results/r_remote.md]
#
# The S3 server is moto's, on loopback, started with the project's Python (KOMPAKT_PYTHON_BIN,
# default .venv/bin/python, which has moto through the test extra). R has no S3 client in
# Debian (aws.s3 and paws are not packaged), so the alternatives here are the local ones; the
# Python benchmark bench/remote_store.py compares the same store against s3fs and pickle.
# Times are medians of the rounds in this one R process; the 80 MB value is new in each round.
#
# Needs the R package (R_LIBS=target/R-library after scripts/test.sh) and storr.

source(file.path("bench", "r_common.R"))
opts <- bench_args("r_remote")
tiny_keys <- if (opts$quick) 20L else 200L
big_n <- if (opts$quick) 1e6 else 1e7
suppressMessages({
  library(kompakt)
  library(storr)
})

python <- Sys.getenv("KOMPAKT_PYTHON_BIN", file.path(".venv", "bin", "python"))
work <- normalizePath(opts$data_dir)
unlink(list.files(work, full.names = TRUE), recursive = TRUE)
# moto logs every request: the benchmark counts them there.
source(file.path("r", "kompakt", "tests", "testthat", "helper-s3.R"))
server <- start_s3_server(python, work, "bench")
server_log <- server$log
requests_for <- function(key) sum(grepl(paste0(" /bench/", key, " "), readLines(server_log, warn = FALSE), fixed = TRUE))
do.call(Sys.setenv, as.list(c(server$env, XDG_CACHE_HOME = file.path(work, "cache"))))
upload <- function(file, key) {
  stopifnot(system2(python, c("-c", shQuote(paste0(
    "import os, sys, boto3; boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL'])",
    ".upload_file(sys.argv[1], 'bench', sys.argv[2])")), file, key)) == 0)
}

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t0
}
counter <- 0L
fresh_cache <- function() {
  counter <<- counter + 1L
  Sys.setenv(XDG_CACHE_HOME = file.path(work, paste0("cache-", counter)))
}

# Each store: how to open it (again, as another machine would: an empty cache), set and get.
stores <- list(
  kpk_store_s3 = list(open = function() kpk_store("s3://bench/kpk"), set = function(s, k, v) s$set(k, v),
                      get = function(s, k) s$get(k)),
  storr_kompakt_s3 = list(open = function() storr_kompakt("s3://bench/storr"), set = function(s, k, v) s$set(k, v),
                          get = function(s, k) s$get(k, use_cache = FALSE)),
  kpk_store_local = list(open = function() kpk_store(file.path(work, "kpk")), set = function(s, k, v) s$set(k, v),
                         get = function(s, k) s$get(k)),
  storr_rds_local = list(open = function() storr_rds(file.path(work, "rds")), set = function(s, k, v) s$set(k, v),
                         get = function(s, k) s$get(k, use_cache = FALSE))
)

rows <- list()
for (name in names(stores)) {
  m <- stores[[name]]
  s <- m$open()
  set.seed(1)
  values <- lapply(seq_len(tiny_keys), function(i) runif(1))
  keys <- sprintf("k%04d", seq_len(tiny_keys))
  tiny_set <- elapsed(for (i in seq_along(keys)) m$set(s, keys[[i]], values[[i]]))
  tiny_get <- elapsed(for (k in keys) m$get(s, k))
  big <- list(set = numeric(), first = numeric(), again = numeric())
  for (round in seq_len(opts$repeats)) {
    x <- runif(big_n)
    big$set <- c(big$set, elapsed(m$set(s, "big", x)))
    fresh_cache()
    other <- m$open()
    big$first <- c(big$first, elapsed(y <- m$get(other, "big")))
    stopifnot(identical(y, x))
    big$again <- c(big$again, elapsed(m$get(other, "big")))
  }
  rows[[name]] <- data.frame(
    store = name, tiny_set_ms = 1000 * tiny_set / tiny_keys, tiny_get_ms = 1000 * tiny_get / tiny_keys,
    big_set_s = median(big$set), big_get_first_s = median(big$first), big_get_again_s = median(big$again)
  )
  cat(name, "done\n")
}
stores_table <- do.call(rbind, rows)

# Files: an object and a table saved on disk, uploaded, read back from S3 and from disk.
obj_path <- file.path(work, "obj.kpk")
kpk_save(runif(big_n), obj_path)
upload(obj_path, "obj.kpk")
n <- if (opts$quick) 1e6 else 1e7
set.seed(2)
df <- data.frame(Logical = sample(c(TRUE, FALSE, NA), n, replace = TRUE), Integer = sample(1:100, n, replace = TRUE),
                 Real = sample(sample(1:1e4, 1e3) / 100, n, replace = TRUE),
                 Factor = factor(sample(c("Good", "Bad", "Unknown"), n, replace = TRUE)))
table_path <- file.path(work, "table.kpk")
write_kpk_table(df, table_path)
upload(table_path, "table.kpk")
median_of <- function(f) median(vapply(seq_len(opts$repeats), function(i) elapsed(f()), 0))
# Requests of one read (the first round's).
requests_of <- function(key, f) {
  before <- requests_for(key)
  f()
  Sys.sleep(0.5) # the log is written after the answer
  requests_for(key) - before
}
s3_reads <- list(
  function() kpk_read("s3://bench/obj.kpk"),
  function() read_kpk_table("s3://bench/table.kpk"),
  function() read_kpk_table("s3://bench/table.kpk", c("Integer", "Real"), from = n / 2, to = n / 2 + 999)
)
files_table <- data.frame(
  read = c(sprintf("kpk_read, %.0f MB object", big_n * 8 / 1e6), "read_kpk_table, whole table",
           "read_kpk_table, 2 columns x 1000 rows"),
  s3_requests = c(requests_of("obj.kpk", s3_reads[[1]]), requests_of("table.kpk", s3_reads[[2]]),
                  requests_of("table.kpk", s3_reads[[3]])),
  s3_s = vapply(s3_reads, median_of, 0),
  disk_s = c(median_of(function() kpk_read(obj_path)),
             median_of(function() read_kpk_table(table_path)),
             median_of(function() read_kpk_table(table_path, c("Integer", "Real"), from = n / 2, to = n / 2 + 999)))
)

fmt <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(v) formatC(v, format = "f", digits = if (all(v == round(v))) 0 else 3))
  c(paste("|", paste(names(df), collapse = " | "), "|"),
    paste("|", paste(ifelse(num, "--:", "--"), collapse = " | "), "|"),
    apply(df, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
}
out <- c(sprintf("R %s, %d tiny keys (runif(1) each), a %g-double vector (%.0f MB), medians of %d rounds",
                 getRversion(), tiny_keys, big_n, big_n * 8 / 1e6, opts$repeats), "",
         fmt(stores_table), "", sprintf("Files: a %g-double object, a %g-row table of the fst blog's columns", big_n, n), "",
         fmt(files_table))
writeLines(out, opts$out_md)
writeLines(out)
server$stop()
