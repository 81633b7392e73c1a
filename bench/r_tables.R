# kompakt tables for R against fst, qs2, saveRDS, data.table's fwrite/fread and Parquet.
#
#   Rscript bench/r_tables.R [--quick] [--repeats N] [--out bench/results/r_tables.md]
#                            [--scenarios fst,strings,keyed] [--methods kompakt,fst:50,...]
#
# Each operation runs in a fresh R process (Rscript) that builds the data (fixed seed, outside
# the timing), then times the call alone; memory is the kernel's high-water mark (VmHWM) minus
# the resident size just before the call. Parquet (R's arrow package is not available here)
# is written and read by pyarrow from the same data, in the same run: the Python process reads
# kompakt's table of that data first, outside its timing. Files go to bench/data/r_tables,
# whose page cache is warm for reads, alike for every method.
#
# Needs R_LIBS with kompakt, fst, qs2 (../shared/vendor) and data.table (Debian); Python with
# kompakt and pyarrow in .venv (or KOMPAKT_PYTHON_BIN). A method whose package is missing is
# skipped and said so.
#
# Scenarios (issue "kompakt for R, part 2"):
#   fst      the fst blog's data frame (fst 0.8.0): Logical, Integer, Real, Factor; 1e7 rows
#   strings  20 character columns (words, ids, codes, sentences), 1e6 rows
#   keyed    the fst frame as a data.table keyed by Integer (sorted)
# Operations: write, read (the whole frame), slice (rows [5e6, 5e6 + 1000) of two columns;
# only the formats that read a row range without the rest: kompakt and fst).

source(file.path("bench", "r_common.R"))
opts <- bench_args("r_tables")
quick <- opts$quick
repeats <- opts$repeats
out_md <- opts$out_md
data_dir <- opts$data_dir
python <- Sys.getenv("KOMPAKT_PYTHON_BIN", file.path(".venv", "bin", "python"))

child <- '
args <- commandArgs(trailingOnly = TRUE)
scenario <- args[[1]]; method <- args[[2]]; op <- args[[3]]; path <- args[[4]]; n <- as.numeric(args[[5]])
source(file.path("bench", "r_common.R"))
status <- proc_status
fst_frame <- function(n) {
  set.seed(1)
  data.frame(
    Logical = sample(c(TRUE, FALSE, NA), prob = c(0.85, 0.1, 0.05), n, replace = TRUE),
    Integer = sample(1L:100L, n, replace = TRUE),
    Real = sample(sample(1:10000, 20) / 100, n, replace = TRUE),
    Factor = as.factor(sample(labels(UScitiesD), n, replace = TRUE)))
}
strings_frame <- function(n) {
  set.seed(2)
  words <- vapply(1:5000, function(i) paste(sample(letters, sample(3:10, 1), TRUE), collapse = ""), "")
  cols <- lapply(1:20, function(j) switch(j %% 4 + 1,
    sample(words, n, TRUE),
    sprintf("id-%08d", sample.int(1e8, n, TRUE)),
    sample(c("red", "green", "blue", NA), n, TRUE),
    paste(sample(words, n, TRUE), sample(words, n, TRUE), sample(words, n, TRUE))))
  names(cols) <- sprintf("s%02d", 1:20)
  as.data.frame(cols, stringsAsFactors = FALSE)
}
make <- function() {
  if (scenario == "strings") return(strings_frame(n))
  df <- fst_frame(n)
  if (scenario == "keyed") { df <- data.table::as.data.table(df); data.table::setkey(df, Integer) }
  df
}
suppressMessages({
  library(kompakt)
  if (startsWith(method, "fst")) library(fst)
  if (startsWith(method, "qs2")) library(qs2)
  if (startsWith(method, "fwrite") || scenario == "keyed") library(data.table)
})
level <- suppressWarnings(as.integer(sub(".*:", "", method)))
x <- if (op == "write") make() else NULL
as_dt <- scenario == "keyed"
cols <- if (scenario == "strings") c("s01", "s02") else c("Real", "Factor")
from <- if (n > 5e6) 5e6 else n / 2
write <- switch(sub(":.*", "", method),
  kompakt = function() write_kpk_table(x, path),
  kompakt_lz4 = function() write_kpk_table(x, path, codec = "lz4"),
  fst = function() fst::write_fst(x, path, compress = level),
  qs2 = function() qs2::qs_save(x, path, compress_level = level, nthreads = 1L),
  saveRDS = function() saveRDS(x, path, compress = FALSE),
  saveRDS_gzip = function() saveRDS(x, path),
  fwrite = function() data.table::fwrite(x, path))
read <- switch(sub(":.*", "", method),
  kompakt = , kompakt_lz4 = function() read_kpk_table(path, as.data.table = as_dt),
  fst = function() fst::read_fst(path, as.data.table = as_dt),
  qs2 = function() qs2::qs_read(path, nthreads = 1L),
  saveRDS = , saveRDS_gzip = function() readRDS(path),
  fwrite = function() data.table::fread(path, stringsAsFactors = scenario != "strings"))
slice <- switch(sub(":.*", "", method),
  kompakt = , kompakt_lz4 = function() read_kpk_table(path, columns = cols, from = from, to = from + 999),
  fst = function() fst::read_fst(path, columns = cols, from = from, to = from + 999, as.data.table = as_dt),
  NULL)
if (op == "slice" && is.null(slice)) { cat("slice\\tNA\\tNA\\tNA\\tNA\\n"); quit(save = "no") }
f <- switch(op, write = write, read = read, slice = slice)
# The timed loop runs in a function compiled before the clock starts: a loop at top level is
# compiled by the R JIT when it starts, about 15 ms that the timing of 20 slices included.
timed <- function(reps) {
  t0 <- Sys.time()
  for (i in seq_len(reps)) y <- f()
  as.numeric(Sys.time() - t0, units = "secs") / max(reps, 1)
}
invisible(timed(0)); invisible(timed(0))
if (op == "slice") {
  # A table is read after it was written, not within 2 s of it: kompakt keeps the index of
  # a file only once its times are 2 s old (see docs/DESIGN.md, "How reads are fast"). Then
  # the first call loads the package code paths (and the kompakt index); the rest are timed.
  # (Until December 2026 the first call came before the wait, so the timed calls included
  # the first kompakt open of the settled file, about 1 ms over 100 calls.)
  Sys.sleep(max(0, 2.1 - as.numeric(Sys.time() - file.mtime(path), units = "secs")))
}
invisible(gc())
reset_peak()
before <- status("VmRSS")
# After gc() and the write to /proc/self/clear_refs of reset_peak(), the next calls fault
# their memory in again: timed at once, kompakt slices took 190-235 us against 73-77 with the
# warm-up call here (fst 63-66 either way), so a slice warms up after them.
if (op == "slice") invisible(f())
# Sys.time, not system.time: microseconds, and no garbage collection inside the timing. A slice
# is the mean of 100 calls.
t <- timed(if (op == "slice") 100 else 1)
added <- status("VmHWM") - before
frame <- if (op == "write") as.numeric(object.size(x)) else NA
cat(sprintf("%s\\t%.6f\\t%.0f\\t%.0f\\t%.0f\\n", op, t, added, file.size(path), frame))
'
child_file <- tempfile(fileext = ".R")
writeLines(child, child_file)

# Parquet, by pyarrow, from kompakt's table of the same data (written by the R child first).
py_child <- '
import resource, sys, time
import kompakt, pyarrow.parquet as pq
op, source, path = sys.argv[1], sys.argv[2], sys.argv[3]
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
if op == "write":
    table = kompakt.read_table(source, to="arrow")
    reset_peak()
    before = status("VmRSS")
    t0 = time.perf_counter(); pq.write_table(table, path); t = time.perf_counter() - t0
else:
    reset_peak()
    before = status("VmRSS")
    t0 = time.perf_counter(); table = pq.read_table(path).to_pandas(); t = time.perf_counter() - t0
import os
peak = status("VmHWM") - before
print(f"{op}\\t{t:.4f}\\t{peak}\\t{os.path.getsize(path)}")
'
py_file <- tempfile(fileext = ".py")
writeLines(py_child, py_file)

have <- function(pkg) requireNamespace(pkg, quietly = TRUE)
usable <- function(methods) {
  ok <- vapply(methods, function(m) {
    switch(sub(":.*", "", m), fst = have("fst"), qs2 = have("qs2"), fwrite = have("data.table"),
           parquet = file.exists(python) && system2(python, c("-c", shQuote("import pyarrow, kompakt")),
                                                    stdout = FALSE, stderr = FALSE) == 0,
           TRUE)
  }, TRUE)
  for (m in methods[!ok]) message("skipping ", m, ": its package is not installed")
  methods[ok]
}
all_methods <- c("kompakt", "kompakt_lz4", "fst:0", "fst:50", "fst:100", "qs2:3", "saveRDS", "saveRDS_gzip",
                 "fwrite", "parquet")
scenarios <- list(
  fst = list(n = if (quick) 1e6 else 1e7, label = "the fst blog's data frame", methods = usable(all_methods)),
  strings = list(n = if (quick) 1e5 else 1e6, label = "20 character columns",
                 methods = usable(c("kompakt", "fst:50", "qs2:3", "saveRDS", "fwrite", "parquet"))),
  keyed = list(n = if (quick) 1e6 else 1e7, label = "the fst frame as a data.table keyed by Integer",
               methods = usable(c("kompakt", "fst:50", "qs2:3", "saveRDS")))
)

# --scenarios and --methods keep the named ones (default: all): a run of what a change touched.
cli <- commandArgs(trailingOnly = TRUE)
only <- function(flag) {
  i <- match(flag, cli)
  if (is.na(i) || i == length(cli)) NULL else strsplit(cli[[i + 1]], ",")[[1]]
}
if (!is.null(keep <- only("--scenarios"))) scenarios <- scenarios[intersect(names(scenarios), keep)]
if (!is.null(keep <- only("--methods"))) {
  for (s in names(scenarios)) scenarios[[s]]$methods <- intersect(scenarios[[s]]$methods, keep)
}

rscript <- file.path(R.home("bin"), "Rscript")
run_child <- function(scenario, method, op, path, n) {
  if (method == "parquet") {
    source <- paste0(path, ".kpk")
    if (op == "write") system2(rscript, c(child_file, scenario, "kompakt", "write", source, format(n, scientific = FALSE)),
                               stdout = FALSE)
    if (op == "slice") return(list(seconds = NA, added = NA, size = NA, frame = NA))
    out <- system2(python, c(py_file, op, source, path), stdout = TRUE)
  } else {
    out <- system2(rscript, c(child_file, scenario, method, op, path, format(n, scientific = FALSE)),
                   stdout = TRUE, stderr = FALSE)
  }
  fields <- strsplit(tail(out, 1), "\t")[[1]]
  list(seconds = as.numeric(fields[2]), added = as.numeric(fields[3]), size = as.numeric(fields[4]),
       frame = suppressWarnings(as.numeric(fields[5])))
}

rows <- list()
for (s in names(scenarios)) {
  sc <- scenarios[[s]]
  for (r in seq_len(repeats)) {
    # Methods alternate their order each round, so that none always runs on a cooler machine.
    order <- if (r %% 2 == 1) sc$methods else rev(sc$methods)
    for (m in order) {
      path <- file.path(data_dir, paste0(s, "-", gsub(":", "", m), ".bin"))
      for (op in c("write", "read", "slice")) {
        res <- run_child(s, m, op, path, sc$n)
        rows[[length(rows) + 1]] <- data.frame(scenario = s, method = m, op = op, round = r,
                                               seconds = res$seconds, added_mb = res$added / 2^20,
                                               file_mb = res$size / 2^20, frame_mb = res$frame / 2^20)
        cat(sprintf("%-8s %-13s %-5s round %d: %10.6f s  +%6.0f MB  file %8.1f MB\n",
                    s, m, op, r, res$seconds, res$added / 2^20, res$size / 2^20))
      }
      unlink(c(path, paste0(path, ".kpk")))
    }
  }
}
all <- do.call(rbind, rows)

md <- c("# R tables: kompakt against fst, qs2, saveRDS, fwrite and Parquet",
        "",
        sprintf(paste("%s; R %s; %d round(s), medians; a fresh process per operation; kompakt, fst and fwrite",
                      "on all cores (2), qs2 on 1; Parquet by pyarrow (defaults: zstd), read to pandas."),
                format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), repeats),
        "")
for (s in names(scenarios)) {
  d <- all[all$scenario == s, ]
  med <- function(m, op, col) suppressWarnings(median(d[d$method == m & d$op == op, col]))
  frame_mb <- med("kompakt", "write", "frame_mb")
  md <- c(md, sprintf("## %s: %s rows, %.0f MB in R", scenarios[[s]]$label,
                      format(scenarios[[s]]$n, big.mark = ",", scientific = FALSE), frame_mb), "",
          "| method | write s | read s | 1000 rows x 2 cols us | file MB | write +RSS MB | read +RSS MB | read RSS / frame |",
          "|--|--:|--:|--:|--:|--:|--:|--:|")
  for (m in scenarios[[s]]$methods) {
    md <- c(md, sprintf("| %s | %.3f | %.3f | %s | %.1f | %.0f | %.0f | %.2f |", m,
                        med(m, "write", "seconds"), med(m, "read", "seconds"),
                        if (is.na(med(m, "slice", "seconds"))) "-" else sprintf("%.0f", 1e6 * med(m, "slice", "seconds")),
                        med(m, "write", "file_mb"), med(m, "write", "added_mb"), med(m, "read", "added_mb"),
                        med(m, "read", "added_mb") / frame_mb))
  }
  md <- c(md, "")
}
writeLines(md, out_md)
cat("\n", paste(md, collapse = "\n"), "\n", sep = "")
cat("written to", out_md, "\n")
