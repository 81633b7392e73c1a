# The table of bad options every front end checks (crates/kompakt-api/tests/bad_options.tsv):
# each row, given to kpk_serialize (and, where the table's options are the writer's, kpk_save),
# fails with the message the CLI, Python and the C API give.
test_that("every bad option gives the message of every front end", {
  rows <- bad_options_table()
  expect_gt(nrow(rows), 9)
  numeric <- c("level", "threads", "typesize", "block_size")
  checked <- 0
  for (i in seq_len(nrow(rows))) {
    pairs <- strsplit(strsplit(rows$options[i], ";", fixed = TRUE)[[1]], "=", fixed = TRUE)
    args <- stats::setNames(lapply(pairs, `[`, 2), vapply(pairs, `[`, "", 1))
    # R's writers take codec, level and threads; typesize, filter and block_size are the
    # C API's and Python's (kpk_save has no such arguments).
    if (!all(names(args) %in% c("codec", "level", "threads"))) next
    for (n in intersect(names(args), numeric)) args[[n]] <- as.numeric(args[[n]])
    # The kind as a condition class (Python's exception class, the C status).
    expect_error(do.call(kpk_serialize, c(list(1:10), args)), rows$message[i], fixed = TRUE,
                 class = paste0("kompakt_", rows$kind[i], "_error"), info = rows$case[i])
    checked <- checked + 1
  }
  expect_gt(checked, 6)
})
