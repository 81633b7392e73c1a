# Exports the data frames that ship inside R packages as kompakt tables, for bench/corpus.py.
#
#   Rscript bench/corpus_r.R OUT_DIR PACKAGE...
#
# Every data set of each package that is a data.frame (tibbles and data.tables included) with
# at least one row and one column is written with kompakt's R writer to
# OUT_DIR/<package>.<name>.kpk; corpus.py reads them into Arrow and strips R's metadata, so
# every format compares on the same Arrow table. Prints one line per data set, tab-separated:
# package, name, rows, columns, and "ok" or the reason it was skipped (not a data frame, a
# column kompakt's R writer refuses: list columns, matrices, complex numbers).
suppressMessages(library(kompakt))
args <- commandArgs(trailingOnly = TRUE)
out <- args[[1]]
packages <- args[-1]
dir.create(out, recursive = TRUE, showWarnings = FALSE)
for (pkg in packages) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    cat(pkg, "-", 0, 0, "package not installed\n", sep = "\t")
    next
  }
  items <- data(package = pkg)$results[, "Item"]
  # "beavers (beaver1)": the object is beaver1, loaded by the data set beavers.
  objects <- sub("^.*\\((.*)\\)$", "\\1", items)
  sets <- sub(" \\(.*$", "", items)
  for (i in seq_along(items)) {
    env <- new.env()
    got <- tryCatch(suppressWarnings(suppressMessages(
      utils::data(list = sets[[i]], package = pkg, envir = env))), error = function(e) NULL)
    x <- if (is.null(got) || !exists(objects[[i]], envir = env, inherits = FALSE)) NULL else get(objects[[i]], envir = env)
    name <- objects[[i]]
    if (!is.data.frame(x)) {
      cat(pkg, name, 0, 0, "not a data frame\n", sep = "\t")
      next
    }
    if (nrow(x) == 0 || ncol(x) == 0) {
      cat(pkg, name, nrow(x), ncol(x), "empty\n", sep = "\t")
      next
    }
    path <- file.path(out, paste0(pkg, ".", gsub("[^A-Za-z0-9_.-]", "_", name), ".kpk"))
    why <- tryCatch({
      write_kpk_table(as.data.frame(x), path)
      "ok"
    }, error = function(e) gsub("[\t\n]", " ", conditionMessage(e)))
    cat(paste(pkg, name, nrow(x), ncol(x), why, sep = "\t"), "\n", sep = "")
  }
}
