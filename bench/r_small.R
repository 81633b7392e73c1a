# kompakt for R against saveRDS and qs2 on many small objects: 1000 small objects (a few
# numbers, a short character vector, a small list) saved to and read from 1000 files, one file
# each, as a targets or drake cache does for small targets and dynamic branches.
#
#   Rscript bench/r_small.R [--quick] [--repeats N] [--out bench/results/r_small.md]
#
# Run from the repository's root with R_LIBS naming the libraries that hold kompakt, qs2 (and
# its dependencies), e.g. R_LIBS=target/R-library:$HOME/R-vendor. A method whose package is
# missing is skipped and said so.
#
# Methods, each with its package's default settings: saveRDS (gzip, R's default),
# saveRDS(compress = FALSE), qs2::qs_save / qs_read (nthreads = 1, qs2's default) and
# kompakt::kpk_save / kpk_read. When kpk_save has a `sync` argument, kompakt runs three times:
# sync = "none" (atomic rename, no fsync), sync = "always" (fsync of the file and its folder)
# and the default (sync not given: options(kompakt.sync=), else KOMPAKT_SYNC, else the
# package's default); the header of the report says which of these the environment sets.
# Without the argument (an older build of the package, which fsyncs every save) kompakt runs
# once, as "kompakt (no sync arg: fsyncs)".
#
# How: for every method, layout and round, the method's folder bench/data/r_small/<method>/
# (crowded-<method>/ for the second layout) is moved out of the way and made again, then one
# fresh R process (Rscript) saves the 1000 objects to 1000 files and another fresh one reads
# them all back (and checks that they are identical to what was saved, after the timing). Each
# process makes its objects (deterministic: set.seed), loads its package and calls gc() before
# the clock starts; the time is taken inside the process around the loop of 1000 calls alone,
# so R's start-up and the package's loading are not in it. The folder is on the repository's
# disk (not a tmpfs; the report names the file system and its mount options, which decide what
# an fsync costs), and its page cache is warm for the reads, as for every method alike.
# Methods alternate their order from round to round. Folders are deleted only at the end of
# the run, and the run starts when creating a file is quick (see retire() and fs_settle()
# below: on this disk, deleting files slows creating files for minutes). Before each method's
# save the script waits (up to BENCH_IDLE_WAIT seconds, default 5) for other processes to use
# less than 0.25 cores, and the report says how many cores they used during the measurements:
# on a shared machine their CPU slows every method and their writes make fsyncs wait.
#
# Two layouts, each method in both: the method's folder holds nothing else ("empty folder"),
# or it already holds 10,000 other entries (hard links to one empty file) before the save
# ("crowded folder"), as the objects folder of a large targets pipeline does: a save that
# looks at the whole folder (a scan for stale temporary files, say) shows it there.
#
# Reported per method: milliseconds per object for the save and for the read (median of the
# rounds, min-max in brackets), their ratio to saveRDS's (gzip) medians, the mean file size in
# bytes and its ratio to qs2's and to saveRDS's (gzip), and the sizes' min / median / max; for
# the crowded folder, the times and their ratio to the same method's in the empty folder. On
# ext4 every one of these files takes one 4 KiB block whatever its size: the sizes tell what a
# copy or an upload moves, not the disk space. --quick runs one round, the default three.

source(file.path("bench", "r_common.R"))
opts <- bench_args("r_small")
repeats <- opts$repeats
out_md <- opts$out_md
data_dir <- opts$data_dir
n_objects <- 1000L

# What one child process runs: make the objects (save) or read them back (read), timed.
child <- '
args <- commandArgs(trailingOnly = TRUE)
method <- args[[1]]; op <- args[[2]]; dir <- args[[3]]; n <- as.integer(args[[4]])
# The 1000 objects, the same in every process: five small kinds in turn.
make <- function(n) {
  set.seed(42)
  lapply(seq_len(n), function(i) switch(i %% 5 + 1,
    c(1.5, 2.25, 3),
    runif(5),
    paste0(c("alpha", "beta", "gamma"), "_", i),
    list(id = i, name = paste0("target_", i), ok = TRUE),
    1:10 + i))
}
suppressMessages({
  if (startsWith(method, "kompakt")) library(kompakt)
  if (method == "qs2") library(qs2)
})
ext <- switch(sub("_.*", "", method), rds = ".rds", qs2 = ".qs2", kompakt = ".kpk")
paths <- file.path(dir, sprintf("%04d%s", seq_len(n), ext))
save_one <- switch(method,
  rds_gzip = function(x, path) saveRDS(x, path),
  rds_raw = function(x, path) saveRDS(x, path, compress = FALSE),
  qs2 = function(x, path) qs2::qs_save(x, path, nthreads = 1L),
  kompakt_none = function(x, path) kompakt::kpk_save(x, path, sync = "none"),
  kompakt_always = function(x, path) kompakt::kpk_save(x, path, sync = "always"),
  kompakt_default = , kompakt_nosyncarg = function(x, path) kompakt::kpk_save(x, path))
read_one <- switch(sub("_.*", "", method),
  rds = function(path) readRDS(path),
  qs2 = function(path) qs2::qs_read(path, nthreads = 1L),
  kompakt = function(path) kompakt::kpk_read(path))
if (op == "save") {
  objects <- make(n)
  invisible(gc())
  t <- system.time(for (i in seq_len(n)) save_one(objects[[i]], paths[[i]]))[["elapsed"]]
  ok <- TRUE
} else {
  got <- vector("list", n)
  invisible(gc())
  t <- system.time(for (i in seq_len(n)) got[[i]] <- read_one(paths[[i]]))[["elapsed"]]
  ok <- identical(got, make(n))
}
cat(sprintf("%s\\t%.4f\\t%s\\n", op, t, ok))
'
child_file <- tempfile(fileext = ".R")
writeLines(child, child_file)

# The machine: how busy it is, quiet waits, old folders, a private kompakt (bench/r_machine.R).
source(file.path("bench", "r_machine.R"))
# Whether the installed kompakt has kpk_save(sync =): decides kompakt's variants and labels.
sync_arg <- have("kompakt") && "sync" %in% names(formals(kompakt::kpk_save))
labels <- c(rds_gzip = "saveRDS (gzip)", rds_raw = "saveRDS(compress = FALSE)", qs2 = "qs2::qs_save",
            kompakt_none = "kompakt sync = \"none\"", kompakt_always = "kompakt sync = \"always\"",
            kompakt_default = "kompakt, sync not given (default)",
            kompakt_nosyncarg = "kompakt (no sync arg: fsyncs)")
methods <- c("rds_gzip", "rds_raw", "qs2",
             if (sync_arg) c("kompakt_none", "kompakt_always", "kompakt_default") else "kompakt_nosyncarg")
ok <- vapply(methods, function(m) switch(sub("_.*", "", m), rds = TRUE, qs2 = have("qs2"), kompakt = have("kompakt")), TRUE)
for (m in methods[!ok]) message("skipping ", labels[[m]], ": its package is not installed")
methods <- methods[ok]

# The file system the files go to, and its mount options (what an fsync costs depends on them).
fs_info <- function(dir) {
  df <- system2("df", c("-T", "-P", shQuote(dir)), stdout = TRUE)
  f <- strsplit(tail(df, 1), " +")[[1]]
  mounts <- strsplit(readLines("/proc/mounts"), " ")
  m <- Filter(function(x) x[[2]] == f[[7]], mounts)
  sprintf("%s (%s, mounted on %s%s)", f[[2]], f[[1]], f[[7]], if (length(m)) paste0(", ", tail(m, 1)[[1]][[4]]) else "")
}
version_of <- function(pkg) if (have(pkg)) as.character(packageVersion(pkg)) else "not installed"
kompakt_built <- if (have("kompakt")) sub("^.*; ([0-9]{4}-[^;]*);.*$", "\\1", packageDescription("kompakt")$Built) else ""
sync_env <- c(option = format(getOption("kompakt.sync", "unset")),
              KOMPAKT_SYNC = if (nzchar(Sys.getenv("KOMPAKT_SYNC"))) Sys.getenv("KOMPAKT_SYNC") else "unset")
cat(sprintf("R %s; kompakt %s (built %s; sync argument: %s); qs2 %s\nfiles on %s\n",
            getRversion(), version_of("kompakt"), kompakt_built, if (sync_arg) "yes" else "no",
            version_of("qs2"), fs_info(data_dir)))

run_child <- function(method, op, dir) {
  out <- system2(file.path(R.home("bin"), "Rscript"), c(child_file, method, op, dir, n_objects),
                 stdout = TRUE, stderr = FALSE)
  fields <- strsplit(tail(out, 1), "\t")[[1]]
  if (length(fields) != 3 || fields[[1]] != op) stop(method, " ", op, " failed: ", paste(out, collapse = "\n"))
  list(seconds = as.numeric(fields[[2]]), ok = as.logical(fields[[3]]))
}

# Two layouts: the method's folder holds only its 1000 files ("empty folder"), or it holds
# 10,000 other (empty) files before the save, as a targets store of a large pipeline does
# ("crowded folder"; the method's files are the same).
crowd <- 10000L
layouts <- c(empty = "an empty folder", crowded = sprintf("a folder already holding %s other files", format(crowd, big.mark = ",")))
rows <- list()
sizes <- list()
for (r in seq_len(repeats)) {
  order <- if (r %% 2 == 1) methods else rev(methods)
  for (layout in names(layouts)) for (m in order) {
    dir <- file.path(data_dir, if (layout == "empty") m else paste0("crowded-", m))
    retire(dir)
    dir.create(dir, recursive = TRUE)
    # The other files are hard links to one empty file: entries in the folder, no inodes.
    if (layout == "crowded") {
      file.create(file.path(dir, "other"))
      file.link(file.path(dir, "other"), file.path(dir, sprintf("other-%05d", seq_len(crowd))))
    }
    idle_wait()
    s0 <- cpu_seconds()
    save <- run_child(m, "save", dir)
    s1 <- cpu_seconds()
    read <- run_child(m, "read", dir)
    busy <- c(busy, others_cores(s0, s1), others_cores(s1))
    if (!read$ok) stop(labels[[m]], ": the objects read back differ from those saved")
    size <- file.size(list.files(dir, pattern = "^[0-9]{4}[.]", full.names = TRUE))
    if (length(size) != n_objects) stop(labels[[m]], ": ", length(size), " files, not ", n_objects)
    if (layout == "empty") sizes[[m]] <- size
    rows[[length(rows) + 1]] <- data.frame(layout = layout, method = m, round = r, save = save$seconds, read = read$seconds)
    cat(sprintf("round %d %-7s %-34s save %7.3f s  read %7.3f s  mean file %6.1f B  others %.2f/%.2f cores\n",
                r, layout, labels[[m]], save$seconds, read$seconds, mean(size), tail(busy, 2)[[1]], tail(busy, 1)))
    if (layout == "crowded") retire(dir)
  }
}
all <- do.call(rbind, rows)

# Milliseconds per object: median (min-max) of the rounds.
per_object <- function(layout, m, op) 1000 * all[all$layout == layout & all$method == m, op] / n_objects
med <- function(layout, m, op) median(per_object(layout, m, op))
spread <- function(layout, m, op) {
  x <- per_object(layout, m, op)
  if (length(x) > 1) sprintf("%.3f (%.3f-%.3f)", median(x), min(x), max(x)) else sprintf("%.3f", x)
}
ratio <- function(a, b) if (is.null(b) || is.na(b)) "-" else sprintf("%.2fx", a / b)
base <- if ("rds_gzip" %in% methods) "rds_gzip" else NULL
mean_size <- function(m) if (m %in% names(sizes)) mean(sizes[[m]]) else NA

md <- c("# R: many small objects, kompakt against saveRDS and qs2",
        "",
        sprintf("%s; R %s; kompakt %s (built %s; `sync` argument: %s), qs2 %s.",
                format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), version_of("kompakt"), kompakt_built,
                if (sync_arg) "yes" else "no, so it fsyncs every save", version_of("qs2")),
        sprintf("%d objects, one file each; %d round(s): medians, min-max in brackets; a fresh R process per save of all files and per read of all files, timed around the loop alone.",
                n_objects, repeats),
        sprintf("Files on %s. kompakt.sync option: %s; KOMPAKT_SYNC: %s.", fs_info(data_dir),
                sync_env[["option"]], sync_env[["KOMPAKT_SYNC"]]),
        "")
for (layout in names(layouts)) {
  md <- c(md, paste0("## Saved to and read from ", layouts[[layout]]), "",
          if (layout == "empty") c(
            "| method | save ms/object | read ms/object | save vs saveRDS | read vs saveRDS | mean file B | vs qs2 | vs saveRDS | file B min / median / max |",
            "|--|--:|--:|--:|--:|--:|--:|--:|--:|") else c(
            "| method | save ms/object | read ms/object | save vs saveRDS | read vs saveRDS | save vs empty folder | read vs empty folder |",
            "|--|--:|--:|--:|--:|--:|--:|"))
  for (m in methods) {
    cells <- sprintf("| %s | %s | %s | %s | %s |", labels[[m]], spread(layout, m, "save"), spread(layout, m, "read"),
                     ratio(med(layout, m, "save"), if (!is.null(base)) med(layout, base, "save")),
                     ratio(med(layout, m, "read"), if (!is.null(base)) med(layout, base, "read")))
    s <- sizes[[m]]
    md <- c(md, if (layout == "empty") {
      sprintf("%s %.1f | %s | %s | %.0f / %.0f / %.0f |", cells, mean(s), ratio(mean(s), mean_size("qs2")),
              ratio(mean(s), mean_size("rds_gzip")), min(s), median(s), max(s))
    } else {
      sprintf("%s %s | %s |", cells, ratio(med(layout, m, "save"), med("empty", m, "save")),
              ratio(med(layout, m, "read"), med("empty", m, "read")))
    })
  }
  md <- c(md, "")
}
md <- c(md, "saveRDS = saveRDS with its defaults (gzip); the ratios are of the medians.", "")
finish_report(md, out_md)
