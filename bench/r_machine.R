# What the R benchmarks that create many files share (bench/r_small.R, bench/r_targets.R):
# how busy the rest of the machine is, waiting for it and for the file system to be quiet,
# retiring old folders without deleting them during the run, and a private copy of the installed
# kompakt. Sourced into the script's global environment after `data_dir` is set (it defines
# `trash`, `private_lib`, `kompakt_source`, `build_at_start`, `machine_at_start` and `busy`
# there, and waits for the file system once).

have <- function(pkg) requireNamespace(pkg, quietly = TRUE)

# How busy the rest of the machine was: the CPU time all processes used (/proc/stat) minus this
# process's and its children's, over the wall time, in cores. Others' builds or tests running
# at the same time slow everything and make fsyncs wait behind their writes.
cpu_seconds <- function() {
  f <- as.numeric(strsplit(readLines("/proc/stat", n = 1), " +")[[1]][-1])
  busy <- (sum(f[1:8]) - f[[4]] - f[[5]]) / 100  # user nice system idle iowait irq softirq steal, in ticks of 1/100 s
  own <- sum(proc.time()[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
  c(wall = proc.time()[["elapsed"]], others = busy - own)
}
machine_at_start <- cpu_seconds()

# Old folders are moved into bench/data/<name>/.trash and deleted only when the run is over.
# On ext4 without a journal (this machine's disk; ext4's recently_deleted()) an inode freed
# less than 60 s ago (300 s while its block is dirty) is not reused, and every file created
# meanwhile skips past such inodes one by one: deleting thousands of files makes creating
# files several times slower for minutes (0.2-0.5 ms instead of 0.03 ms each, here), which
# would fall on whichever method happens to run next.
trash <- file.path(data_dir, ".trash")
retire <- function(path) {
  if (!file.exists(path)) return(invisible())
  dir.create(trash, showWarnings = FALSE)
  if (!file.rename(path, tempfile(paste0(basename(path), "-"), tmpdir = trash))) unlink(path, recursive = TRUE)
}
for (old in setdiff(list.files(data_dir, all.files = TRUE, no.. = TRUE), ".trash")) retire(file.path(data_dir, old))

# kompakt is copied into a private library (bench/data/<name>/.lib) at the start, and this
# process and every child use that copy: other sessions reinstall the package in its library
# while they work, and one run must measure one build (bench/core.sh does the same with its
# binary). The report says when the installed package changed meanwhile.
private_lib <- file.path(data_dir, ".lib")
kompakt_source <- find.package("kompakt", quiet = TRUE)
for (try in 1:3) {  # absent for a moment while another session reinstalls it
  if (length(kompakt_source)) break
  Sys.sleep(20)
  kompakt_source <- find.package("kompakt", quiet = TRUE)
}
if (length(kompakt_source)) {
  dir.create(private_lib, showWarnings = FALSE)
  if (!all(file.copy(kompakt_source, private_lib, recursive = TRUE))) stop("could not copy ", kompakt_source)
  private_lib <- normalizePath(private_lib)
  .libPaths(c(private_lib, .libPaths()))
  Sys.setenv(R_LIBS = paste(c(private_lib, Sys.getenv("R_LIBS")), collapse = ":"))
}
installed_build <- function() {
  d <- file.path(kompakt_source, "DESCRIPTION")
  if (length(kompakt_source) && file.exists(d)) read.dcf(d, fields = "Built")[[1]] else "none"
}
build_at_start <- installed_build()

# Waits (up to BENCH_FS_WAIT seconds, default 180) until creating a file in data_dir is quick
# again (under 0.08 ms for an empty file), after the deletions of an earlier run or of other
# processes; returns the last probe's milliseconds per file and the seconds waited.
fs_settle <- function(limit = as.numeric(Sys.getenv("BENCH_FS_WAIT", "180"))) {
  t0 <- proc.time()[["elapsed"]]
  repeat {
    probe <- tempfile("create-probe-", tmpdir = trash)
    dir.create(probe, recursive = TRUE)
    ms <- system.time(file.create(file.path(probe, sprintf("p%03d", 1:200))))[["elapsed"]] * 1000 / 200
    waited <- proc.time()[["elapsed"]] - t0
    if (ms < 0.08 || waited >= limit) return(c(ms = ms, waited = waited))
    Sys.sleep(15)
  }
}
settled <- fs_settle()
cat(sprintf("creating an empty file in %s: %.3f ms (after waiting %.0f s)\n", data_dir, settled[["ms"]], settled[["waited"]]))
others_cores <- function(from, to = cpu_seconds()) (to[["others"]] - from[["others"]]) / max(to[["wall"]] - from[["wall"]], 1e-3)
# Before each measurement: waits (up to BENCH_IDLE_WAIT seconds, default 5) for the other
# processes to use less than 0.25 cores over a second, as bench/core.sh does.
idle_wait <- function(limit = as.numeric(Sys.getenv("BENCH_IDLE_WAIT", "5"))) {
  t0 <- proc.time()[["elapsed"]]
  repeat {
    s <- cpu_seconds()
    Sys.sleep(1)
    if (others_cores(s) < 0.25 || proc.time()[["elapsed"]] - t0 >= limit) break
  }
}
busy <- numeric()  # other processes' cores during each measurement
others_load <- function() {
  sprintf(paste("other processes used %.2f cores on average during the run (load average at the end: %s);",
                "during the measurements a median of %.2f and at most %.2f, %d of %d measurements above 0.25"),
          others_cores(machine_at_start), paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " "),
          median(busy), max(busy), sum(busy > 0.25), length(busy))
}

# Ends a report: the machine's load and the file system's settling, a note if the installed
# kompakt was rebuilt meanwhile; writes it to `out_md`, prints it, and deletes the retired
# folders and the private copy of kompakt.
finish_report <- function(md, out_md) {
  md <- c(md, paste0("Machine: ", others_load(), sprintf(
    "; creating an empty file in %s took %.3f ms at the start (after waiting %.0f s for the file system to settle).",
    data_dir, settled[["ms"]], settled[["waited"]])), "")
  if (installed_build() != build_at_start) {
    md <- c(md, sprintf("The installed kompakt (%s) was rebuilt during the run; the run used its copy taken at the start.",
                        kompakt_source), "")
  }
  writeLines(md, out_md)
  cat("\n", paste(md, collapse = "\n"), "\n", sep = "")
  cat("written to", out_md, "\n")
  unlink(c(trash, private_lib), recursive = TRUE)
}
