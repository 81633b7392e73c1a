# What the R benchmarks share (bench/r_objects.R, bench/r_tables.R): their command line and
# the memory counter of their child processes. Sourced from the repository's root.

# --quick, --repeats N, --out FILE; the data folder bench/data/<name>. Returns a list.
bench_args <- function(name) {
  args <- commandArgs(trailingOnly = TRUE)
  quick <- "--quick" %in% args
  value <- function(flag, default) {
    i <- match(flag, args)
    if (is.na(i) || i == length(args)) default else args[[i + 1]]
  }
  out <- list(
    quick = quick,
    repeats = as.integer(value("--repeats", if (quick) 1 else 3)),
    out_md = value("--out", file.path("bench", "results", paste0(name, ".md"))),
    data_dir = file.path("bench", "data", name)
  )
  dir.create(out$data_dir, recursive = TRUE, showWarnings = FALSE)
  dir.create(dirname(out$out_md), recursive = TRUE, showWarnings = FALSE)
  out
}

# A field of /proc/self/status in bytes (VmRSS, VmHWM): what a child reports of its memory.
proc_status <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(strsplit(trimws(sub(".*:", "", line)), " +")[[1]][1]) * 1024
}

# Resets the kernel's high-water mark (VmHWM) to the current resident size, so that what an
# operation adds is not hidden by a larger peak from building its data first (Linux >= 4.0).
reset_peak <- function() invisible(try(cat("5", file = "/proc/self/clear_refs"), silent = TRUE))
