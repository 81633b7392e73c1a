# kompakt for R against saveRDS, qs2 and fst: saving and reading R objects.
#
#   Rscript bench/r_objects.R [--quick] [--repeats N] [--out bench/results/r_objects.md]
#
# Each operation runs in a fresh R process (Rscript), so that one's memory and caches do not
# help the next; its time is taken inside that process around the call alone, and its memory
# is the kernel's high-water mark (VmHWM) minus the resident size just before the call: what
# the operation added. Files go to a folder on the same disk as the repository (bench/data/r_objects),
# whose page cache is warm for reads (as for every method alike).
#
# Needs the R package installed (R CMD INSTALL r/kompakt, or the library scripts/test.sh
# makes: R_LIBS=target/R-library) and, for the alternatives, qs2 and fst from
# ../shared/vendor (see its README); a method whose package is missing is skipped and said so.
#
# Scenarios (issue "kompakt for R, part 1"): runif(1e8), 800 MB of doubles with 32 random bits
# each; a list of 10,000 small mixed objects (a drake/targets-like cache).

source(file.path("bench", "r_common.R"))
opts <- bench_args("r_objects")
quick <- opts$quick
repeats <- opts$repeats
out_md <- opts$out_md
data_dir <- opts$data_dir

# What one child process runs: make the data (saves) or nothing (reads), then time `op`.
child <- '
args <- commandArgs(trailingOnly = TRUE)
scenario <- args[[1]]; method <- args[[2]]; op <- args[[3]]; path <- args[[4]]; n <- as.numeric(args[[5]])
source(file.path("bench", "r_common.R"))
status <- proc_status
make <- function() {
  if (scenario == "runif") { set.seed(1); return(runif(n)) }
  if (scenario == "tiny") { set.seed(3); return(lapply(seq_len(n), function(i) runif(1))) }
  set.seed(2)
  lapply(seq_len(n), function(i) switch(i %% 4 + 1,
    list(id = i, name = paste0("target_", i), ok = TRUE),
    runif(10),
    data.frame(a = seq_len(5) + i, b = letters[1:5]),
    paste("value", i)))
}
suppressMessages({
  if (startsWith(method, "kompakt") || startsWith(method, "kpk") || startsWith(method, "storr_kompakt")) library(kompakt)
  if (startsWith(method, "storr")) library(storr)
  if (startsWith(method, "qs2")) library(qs2)
  if (startsWith(method, "fst")) library(fst)
})
x <- if (op == "save") make() else NULL
level <- suppressWarnings(as.integer(sub(".*:", "", method)))
threads <- 1L
# Stores: a folder; "tiny" sets or gets n keys one by one, the others one key.
store <- switch(method,
  storr_rds = storr::storr_rds(path, compress = FALSE),
  storr_rds_gzip = storr::storr_rds(path, compress = TRUE),
  storr_kompakt = kompakt::storr_kompakt(path),
  kpk_store = kompakt::kpk_store(path),
  NULL)
if (!is.null(store)) {
  keys <- if (scenario == "tiny") paste0("k", seq_len(n)) else "value"
  save <- function() if (scenario == "tiny") for (i in seq_along(keys)) store$set(keys[[i]], x[[i]]) else store$set("value", x)
  read <- function() if (scenario == "tiny") for (k in keys) store$get(k) else store$get("value")
  invisible(gc())
  reset_peak()
  before <- status("VmRSS")
  t <- system.time(y <- if (op == "save") save() else read())[["elapsed"]]
  added <- status("VmHWM") - before
  size <- sum(file.size(list.files(path, recursive = TRUE, full.names = TRUE, all.files = TRUE)), na.rm = TRUE)
  cat(sprintf("%s\\t%.4f\\t%.0f\\t%.0f\\n", op, t, added, size))
  quit(save = "no")
}
save <- switch(sub(":.*", "", method),
  saveRDS = function() saveRDS(x, path, compress = FALSE),
  qs2 = function() qs2::qs_save(x, path, compress_level = level, nthreads = threads),
  fst = function() writeBin(fst::compress_fst(serialize(x, NULL), "ZSTD", 0), path),
  kompakt = function() kompakt::kpk_save(x, path),
  kompakt_lz4 = function() kompakt::kpk_save(x, path, codec = "lz4"))
read <- switch(sub(":.*", "", method),
  saveRDS = function() readRDS(path),
  qs2 = function() qs2::qs_read(path, nthreads = threads),
  fst = function() unserialize(fst::decompress_fst(readBin(path, "raw", file.size(path)))),
  kompakt = function() kompakt::kpk_read(path),
  kompakt_lz4 = function() kompakt::kpk_read(path))
invisible(gc())
reset_peak()
before <- status("VmRSS")
t <- system.time(y <- if (op == "save") save() else read())[["elapsed"]]
added <- status("VmHWM") - before
cat(sprintf("%s\\t%.4f\\t%.0f\\t%.0f\\n", op, t, added, file.size(path)))
'
child_file <- tempfile(fileext = ".R")
writeLines(child, child_file)

have <- function(pkg) requireNamespace(pkg, quietly = TRUE)
usable <- function(methods) {
  ok <- vapply(methods, function(m) {
    switch(sub(":.*", "", m), saveRDS = TRUE, qs2 = have("qs2"), fst = have("fst"),
           storr_rds = , storr_rds_gzip = have("storr"), storr_kompakt = have("storr") && have("kompakt"), have("kompakt"))
  }, TRUE)
  for (m in methods[!ok]) message("skipping ", m, ": its package is not installed")
  methods[ok]
}
files <- c("saveRDS", "kompakt", "kompakt_lz4", "qs2:1", "qs2:3", "fst")
stores <- c("saveRDS", "storr_rds", "storr_kompakt", "kpk_store")

scenarios <- list(
  runif = list(n = if (quick) 1e7 else 1e8, label = if (quick) "runif(1e7), 80 MB" else "runif(1e8), 800 MB",
               methods = usable(files)),
  cache = list(n = 1e4, label = "10,000 small mixed objects", methods = usable(files)),
  runif_store = list(n = if (quick) 1e7 else 1e8, label = "the same vector through stores: $set and $get",
                     methods = usable(stores)),
  tiny = list(n = 1000, label = "1000 tiny keys (runif(1) each), set and get one by one; per key in the last columns",
              methods = usable(c("storr_rds", "storr_rds_gzip", "storr_kompakt", "kpk_store")))
)

run_child <- function(scenario, method, op, path, n) {
  data_scenario <- if (scenario == "runif_store") "runif" else scenario
  out <- system2(file.path(R.home("bin"), "Rscript"), c(child_file, data_scenario, method, op, path, format(n, scientific = FALSE)),
                 stdout = TRUE, stderr = FALSE)
  fields <- strsplit(tail(out, 1), "\t")[[1]]
  list(seconds = as.numeric(fields[2]), added = as.numeric(fields[3]), size = as.numeric(fields[4]))
}

rows <- list()
for (s in names(scenarios)) {
  sc <- scenarios[[s]]
  for (r in seq_len(repeats)) {
    # Methods alternate their order each round, so that none always runs on a cooler machine.
    methods <- sc$methods
    order <- if (r %% 2 == 1) methods else rev(methods)
    for (m in order) {
      path <- file.path(data_dir, paste0(s, "-", gsub(":", "", m), ".bin"))
      for (op in c("save", "read")) {
        res <- run_child(s, m, op, path, sc$n)
        rows[[length(rows) + 1]] <- data.frame(scenario = s, method = m, op = op, round = r,
                                               seconds = res$seconds, added_mb = res$added / 2^20,
                                               file_mb = res$size / 2^20)
        cat(sprintf("%-6s %-12s %-5s round %d: %7.3f s  +%6.0f MB  file %8.1f MB\n",
                    s, m, op, r, res$seconds, res$added / 2^20, res$size / 2^20))
      }
      unlink(path, recursive = TRUE)
    }
  }
}
all <- do.call(rbind, rows)

md <- c("# R objects: kompakt against saveRDS, qs2 and fst",
        "",
        sprintf("%s; R %s; %d round(s), medians; fresh R process per operation; 1 thread for qs2, all cores (2) for kompakt's default.",
                format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), repeats),
        "")
for (s in names(scenarios)) {
  d <- all[all$scenario == s, ]
  md <- c(md, paste0("## ", scenarios[[s]]$label), "",
          "| method | save s | read s | file MB | save +RSS MB | read +RSS MB | save vs saveRDS | read vs saveRDS |",
          "|--|--:|--:|--:|--:|--:|--:|--:|")
  med <- function(m, op, col) median(d[d$method == m & d$op == op, col])
  base <- if ("saveRDS" %in% scenarios[[s]]$methods) "saveRDS" else scenarios[[s]]$methods[[1]]
  base_save <- med(base, "save", "seconds")
  base_read <- med(base, "read", "seconds")
  if (s == "tiny") {
    md[length(md) - 1] <- "| method | set s | get s | folder MB | set +RSS MB | get +RSS MB | set us/key | get us/key |"
  } else if (base != "saveRDS") {
    md[length(md) - 1] <- sub("saveRDS", base, sub("saveRDS", base, md[length(md) - 1]))
  }
  for (m in scenarios[[s]]$methods) {
    if (s == "tiny") {
      md <- c(md, sprintf("| %s | %.3f | %.3f | %.1f | %.0f | %.0f | %.0f | %.0f |", m,
                          med(m, "save", "seconds"), med(m, "read", "seconds"), med(m, "save", "file_mb"),
                          med(m, "save", "added_mb"), med(m, "read", "added_mb"),
                          1e6 * med(m, "save", "seconds") / scenarios[[s]]$n, 1e6 * med(m, "read", "seconds") / scenarios[[s]]$n))
      next
    }
    md <- c(md, sprintf("| %s | %.3f | %.3f | %.1f | %.0f | %.0f | %.2fx | %.2fx |", m,
                        med(m, "save", "seconds"), med(m, "read", "seconds"), med(m, "save", "file_mb"),
                        med(m, "save", "added_mb"), med(m, "read", "added_mb"),
                        med(m, "save", "seconds") / base_save, med(m, "read", "seconds") / base_read))
  }
  md <- c(md, "")
}
writeLines(md, out_md)
cat("\n", paste(md, collapse = "\n"), "\n", sep = "")
cat("written to", out_md, "\n")
