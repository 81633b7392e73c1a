# kompakt for R in a targets pipeline, against targets' own "rds" format and qs2 (through
# tar_format()): a pipeline of 200 small dynamic branches plus a few large targets, its first
# build, a rerun with nothing changed, and a rebuild after an edit.
#
#   Rscript bench/r_targets.R [--quick] [--repeats N] [--out bench/results/r_targets.md]
#
# Run from the repository's root with R_LIBS naming the libraries that hold targets, kompakt
# and qs2 (and their dependencies), e.g. R_LIBS=target/R-library:$HOME/R-vendor. A format
# whose package is missing is skipped and said so.
#
# The pipeline (one _targets.R per format, in bench/data/r_targets/<format>/, made afresh for
# every round):
#   data      a data.frame of 2e6 rows (--quick: 2e5): runif doubles, integers 1..1000, a
#             factor of 26 letters, sorted doubles (cumsum of rexp): 48 MB in memory;
#   derived   the rows with y <= 500 (about half), 3 columns: about 20 MB;
#   idx       1:200;
#   branches  pattern = map(idx), iteration = "list": per branch a small list (i, the mean of a
#             slice of data$x times a constant K, a short string), 200 files of ~100-300 bytes;
#   summary   the 200 branches as one small data.frame.
# Formats, set with tar_option_set(format = ...): "rds" (targets' built-in: saveRDS with gzip),
# "qs2" (targets::tar_format() around qs2::qs_save(compress_level = 3, shuffle = TRUE,
# nthreads = 1) and qs_read(validate_checksum = FALSE, nthreads = 1)) and kompakt
# (kompakt::tar_format_kompakt(), default codec and threads). When tar_format_kompakt() has a
# `sync` argument kompakt runs twice, sync = "none" (atomic rename, no fsync) and
# sync = "always" (fsync of every file and its folder); without it (an older build, which fsyncs
# every save) once, as "kompakt (no sync arg: fsyncs)". A control, "rds through tar_format",
# is saveRDS/readRDS (gzip, as "rds") through tar_format(): it separates what targets' custom
# formats cost per target (the functions are kept as text and evaluated for every save and
# read) from what qs2 and kompakt themselves cost.
#
# Phases, each one fresh R process (Rscript) whose working directory is the pipeline's folder,
# running targets::tar_make(callr_function = NULL, reporter = "silent"):
#   build     the first build: every target runs and is saved;
#   no-change the same again: everything is skipped (targets reads its metadata, checks the
#             files' sizes and times; no object is read);
#   rebuild   after an edit of _targets.R that changes the constant K in the branches' function:
#             the 200 branches, their pattern and the summary run again (reading `data` back
#             from the store once), data, derived and idx are skipped.
# The time is the wall clock in this (the parent) process around the child, so it holds R's
# start-up, loading targets and sourcing _targets.R: what a user waits for. The time of
# tar_make() alone, taken inside the child, is reported too. After each phase another child
# (not timed) checks what ran with tar_progress() and, for the no-change run, tar_outdated(),
# and the report prints that check. Medians of the rounds (--quick: 1 round, default 3),
# min-max in brackets; formats alternate their order from round to round. The folder is on the
# repository's disk (the report names its file system), whose page cache is warm; old folders
# are deleted only at the end of the run, and the run starts when creating a file is quick
# (see retire() and fs_settle() below: on this disk, deleting files slows creating files for
# minutes). Before each phase the script waits (up to BENCH_IDLE_WAIT seconds, default 5) for
# other processes to use less than 0.25 cores, and the report says how many cores they used
# during the measurements.
#
# Size: 4-7 minutes for a full run on this 2-core machine with five formats (most of it in gzip
# for the two rds formats, R's start-ups and waiting for other processes), so the data stays at
# the intended 2e6 rows (48 MB); --quick takes 1-3 minutes.

source(file.path("bench", "r_common.R"))
opts <- bench_args("r_targets")
quick <- opts$quick
repeats <- opts$repeats
out_md <- opts$out_md
data_dir <- opts$data_dir
n_rows <- if (quick) 2e5 else 2e6
n_branches <- 200L

# The machine: how busy it is, quiet waits, old folders, a private kompakt (bench/r_machine.R).
source(file.path("bench", "r_machine.R"))
if (!have("targets")) stop("the targets package is not installed")
sync_arg <- have("kompakt") && "sync" %in% names(formals(kompakt::tar_format_kompakt))

# The value of tar_option_set(format = ...) per format, as code written into _targets.R.
format_code <- c(
  rds = '"rds"',
  qs2 = paste0('tar_format(\n',
               '  read = function(path) qs2::qs_read(path, validate_checksum = FALSE, nthreads = 1),\n',
               '  write = function(object, path) qs2::qs_save(object, path, compress_level = 3, shuffle = TRUE, nthreads = 1)\n',
               ')'),
  rdscustom = 'tar_format(read = function(path) readRDS(path), write = function(object, path) saveRDS(object, path))',
  kompakt_none = 'kompakt::tar_format_kompakt(sync = "none")',
  kompakt_always = 'kompakt::tar_format_kompakt(sync = "always")',
  kompakt_nosyncarg = 'kompakt::tar_format_kompakt()')
labels <- c(rds = "rds (targets' own, gzip)", qs2 = "qs2 (tar_format)", rdscustom = "rds through tar_format (control)",
            kompakt_none = "kompakt sync = \"none\"", kompakt_always = "kompakt sync = \"always\"",
            kompakt_nosyncarg = "kompakt (no sync arg: fsyncs)")
formats <- c("rds", "qs2", "rdscustom", if (sync_arg) c("kompakt_none", "kompakt_always") else "kompakt_nosyncarg")
ok <- vapply(formats, function(f) switch(sub("_.*", "", f), rds = , rdscustom = TRUE, qs2 = have("qs2"), kompakt = have("kompakt")), TRUE)
for (f in formats[!ok]) message("skipping ", labels[[f]], ": its package is not installed")
formats <- formats[ok]

# The pipeline's script; `k` is the constant of the branches' function, which the edit changes.
pipeline <- function(format, k) sprintf('# Written by bench/r_targets.R: format %s, K = %s.
library(targets)
tar_option_set(format = %s)
N_ROWS <- %s
K <- %s
make_data <- function(n) data.frame(
  x = runif(n),                                    # doubles, 8 bytes a row, random
  y = sample.int(1000L, n, replace = TRUE),        # integers, 4 bytes a row
  g = factor(sample(letters, n, replace = TRUE)),  # a factor, 4 bytes a row
  t = cumsum(rexp(n))                              # sorted doubles, 8 bytes a row
)
derive <- function(d) {
  keep <- d$y <= 500L
  data.frame(g = d$g[keep], z = d$x[keep] * d$y[keep], t = d$t[keep])
}
branch <- function(i, d) {
  rows <- seq(i, nrow(d), by = %d)
  list(i = i, mean = K * mean(d$x[rows]), label = paste0("branch_", i, "_k", K))
}
list(
  tar_target(data, make_data(N_ROWS)),
  tar_target(derived, derive(data)),
  tar_target(idx, seq_len(%d)),
  tar_target(branches, branch(idx, data), pattern = map(idx), iteration = "list"),
  tar_target(summary, data.frame(
    i = vapply(branches, function(b) b$i, 1L),
    mean = vapply(branches, function(b) b$mean, 1),
    label = vapply(branches, function(b) b$label, "")
  ))
)
', format, k, format_code[[format]], format(n_rows, scientific = FALSE), k, n_branches, n_branches)

# The children: "make" times tar_make() alone; "check" reports what the last run did.
child <- '
op <- commandArgs(trailingOnly = TRUE)[[1]]
if (op == "make") {
  t <- system.time(targets::tar_make(callr_function = NULL, reporter = "silent"))[["elapsed"]]
  cat(sprintf("make\\t%.4f\\n", t))
} else {
  p <- targets::tar_progress(fields = NULL)
  outdated <- targets::tar_outdated(callr_function = NULL, reporter = "silent")
  stems <- p[p$type != "branch", ]
  branch <- p[p$type == "branch", ]
  files <- list.files(file.path("_targets", "objects"), full.names = TRUE)
  size <- function(name) { s <- file.size(file.path("_targets", "objects", name)); if (is.na(s)) 0 else s }
  cat(sprintf("check\\t%s\\t%s\\t%d\\t%d\\t%s\\t%.0f\\t%.0f\\t%.0f\\n",
    paste(sort(stems$name[stems$progress == "completed"]), collapse = ","),
    paste(sort(stems$name[stems$progress == "skipped"]), collapse = ","),
    sum(branch$progress == "completed"), sum(branch$progress == "skipped"),
    paste(sort(outdated), collapse = ","),
    size("data"), size("derived"), sum(file.size(files))))
}
'
child_file <- normalizePath(tempfile(fileext = ".R"), mustWork = FALSE)
writeLines(child, child_file)
rscript <- file.path(R.home("bin"), "Rscript")

# One child in the pipeline's folder: its output's last line, split, and the parent's wall time.
run_in <- function(dir, op) {
  old <- setwd(dir)
  on.exit(setwd(old))
  t0 <- proc.time()[["elapsed"]]
  out <- system2(rscript, c(child_file, op), stdout = TRUE, stderr = TRUE)
  wall <- proc.time()[["elapsed"]] - t0
  fields <- strsplit(tail(out, 1), "\t")[[1]]
  if (fields[[1]] != op) stop(basename(dir), " ", op, " failed:\n", paste(out, collapse = "\n"))
  list(wall = wall, fields = fields)
}

# What each phase should run (stems completed, stems skipped, branches completed/skipped).
expected <- list(
  build = list(completed = "branches,data,derived,idx,summary", skipped = "", branches = c(n_branches, 0L)),
  `no-change` = list(completed = "", skipped = "branches,data,derived,idx,summary", branches = c(0L, n_branches)),
  rebuild = list(completed = "branches,summary", skipped = "data,derived,idx", branches = c(n_branches, 0L)))

fs_info <- function(dir) {
  df <- system2("df", c("-T", "-P", shQuote(dir)), stdout = TRUE)
  f <- strsplit(tail(df, 1), " +")[[1]]
  mounts <- strsplit(readLines("/proc/mounts"), " ")
  m <- Filter(function(x) x[[2]] == f[[7]], mounts)
  sprintf("%s (%s, mounted on %s%s)", f[[2]], f[[1]], f[[7]], if (length(m)) paste0(", ", tail(m, 1)[[1]][[4]]) else "")
}
version_of <- function(pkg) if (have(pkg)) as.character(packageVersion(pkg)) else "not installed"
built_of <- function(pkg) if (have(pkg)) sub("^.*; ([0-9]{4}-[^;]*);.*$", "\\1", packageDescription(pkg)$Built) else ""
versions <- sprintf("R %s; targets %s; kompakt %s (built %s; `sync` argument: %s); qs2 %s",
                    getRversion(), version_of("targets"), version_of("kompakt"), built_of("kompakt"),
                    if (sync_arg) "yes" else "no, so it fsyncs every save", version_of("qs2"))
cat(versions, "\nfiles on", fs_info(data_dir), "\n")

rows <- list()
checks <- list()
for (r in seq_len(repeats)) {
  order <- if (r %% 2 == 1) formats else rev(formats)
  for (f in order) {
    dir <- file.path(data_dir, f)
    retire(dir)
    dir.create(dir, recursive = TRUE)
    for (phase in names(expected)) {
      if (phase == "rebuild") writeLines(pipeline(f, 2), file.path(dir, "_targets.R"))
      if (phase == "build") writeLines(pipeline(f, 1), file.path(dir, "_targets.R"))
      idle_wait()
      s0 <- cpu_seconds()
      made <- run_in(dir, "make")
      busy <- c(busy, others_cores(s0))
      # The check is not timed: a failed one (say, kompakt being reinstalled by another
      # session at that moment) is tried again once, 10 s later.
      chk <- tryCatch(run_in(dir, "check")$fields, error = function(e) {
        message(conditionMessage(e), "\ntrying the check again in 10 s")
        Sys.sleep(10)
        run_in(dir, "check")$fields
      })
      e <- expected[[phase]]
      got_branches <- as.integer(chk[4:5])
      fine <- chk[[2]] == e$completed && chk[[3]] == e$skipped && all(got_branches == e$branches) &&
        (phase != "no-change" || chk[[6]] == "")
      rows[[length(rows) + 1]] <- data.frame(format = f, round = r, phase = phase, wall = made$wall,
                                             make = as.numeric(made$fields[[2]]),
                                             data_mb = as.numeric(chk[[7]]) / 1e6, derived_mb = as.numeric(chk[[8]]) / 1e6,
                                             store_mb = as.numeric(chk[[9]]) / 1e6)
      checks[[length(checks) + 1]] <- data.frame(format = f, round = r, phase = phase, ok = fine,
        text = sprintf("completed: %s + %d branches; skipped: %s + %d branches%s",
                       if (nzchar(chk[[2]])) chk[[2]] else "none", got_branches[[1]],
                       if (nzchar(chk[[3]])) chk[[3]] else "none", got_branches[[2]],
                       if (phase == "no-change") paste0("; tar_outdated(): ", if (nzchar(chk[[6]])) chk[[6]] else "none") else ""))
      cat(sprintf("round %d %-30s %-9s %7.2f s (tar_make %6.2f s, others %.2f cores)  %s  %s\n", r, labels[[f]], phase,
                  made$wall, as.numeric(made$fields[[2]]), tail(busy, 1), if (fine) "ok" else "UNEXPECTED", tail(checks, 1)[[1]]$text))
    }
  }
}
all <- do.call(rbind, rows)
checks <- do.call(rbind, checks)

med <- function(f, phase, col) median(all[all$format == f & all$phase == phase, col])
spread <- function(f, phase, col) {
  x <- all[all$format == f & all$phase == phase, col]
  if (length(x) > 1) sprintf("%.2f (%.2f-%.2f)", median(x), min(x), max(x)) else sprintf("%.2f", x)
}
ratio <- function(f, base, phase, col) if (base %in% formats) sprintf("%.2fx", med(f, phase, col) / med(base, phase, col)) else "-"
phases <- names(expected)
table_for <- function(col) {
  t <- c(paste0("| format | ", paste(sprintf("%s s | vs qs2 | vs rds", phases), collapse = " | "), " |"),
         paste0("|--|", paste(rep("--:|--:|--:|", length(phases)), collapse = "")))
  for (f in formats) {
    cells <- vapply(phases, function(p) sprintf("%s | %s | %s", spread(f, p, col), ratio(f, "qs2", p, col), ratio(f, "rds", p, col)), "")
    t <- c(t, sprintf("| %s | %s |", labels[[f]], paste(cells, collapse = " | ")))
  }
  t
}

md <- c("# R: a targets pipeline, kompakt against rds and qs2",
        "",
        sprintf("%s; %s.", format(Sys.time(), "%Y-%m-%d %H:%M"), versions),
        sprintf("data: %s rows (%.0f MB in memory), derived about half of it; %d dynamic branches and a summary; %d round(s): medians, min-max in brackets. Files on %s.",
                format(n_rows, big.mark = ",", scientific = FALSE), n_rows * 24 / 1e6, n_branches, repeats, fs_info(data_dir)),
        "",
        "## Wall clock of the fresh R process running tar_make(callr_function = NULL)",
        "",
        table_for("wall"),
        "",
        "## tar_make() alone (inside that process)",
        "",
        table_for("make"),
        "",
        "## Store",
        "",
        "| format | data MB | derived MB | _targets/objects MB |",
        "|--|--:|--:|--:|")
for (f in formats) {
  md <- c(md, sprintf("| %s | %.1f | %.1f | %.1f |", labels[[f]], med(f, "build", "data_mb"),
                      med(f, "build", "derived_mb"), med(f, "build", "store_mb")))
}
md <- c(md, "", "## What ran (tar_progress(); tar_outdated() after the no-change run)", "",
        "| format | phase | as expected | rounds |", "|--|--|--|--|")
for (f in formats) for (p in phases) {
  ck <- checks[checks$format == f & checks$phase == p, ]
  texts <- unique(ck$text)
  md <- c(md, sprintf("| %s | %s | %s: %s | %d |", labels[[f]], p, if (all(ck$ok)) "yes" else "NO",
                      paste(texts, collapse = " / "), nrow(ck)))
}
md <- c(md, "")
finish_report(md, out_md)
if (!all(checks$ok)) warning("some phases did not run what they should: see the last table")
