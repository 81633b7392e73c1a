test_that("the targets format's functions are self-contained and round trip", {
  skip_if(requireNamespace("targets", quietly = TRUE), "targets installed: the format is a string")
  fmt <- tar_format_kompakt(codec = "zstd", level = 9, threads = 1)
  expect_named(fmt, c("read", "write"))
  # targets deparses the functions and evaluates them elsewhere: they may use nothing but
  # their arguments and kompakt's exported functions.
  for (f in fmt) {
    expect_identical(environment(f), baseenv())
    expect_true(all(all.names(body(f)) %in% c("{", "::", "kompakt", "kpk_save", "kpk_read", "object", "path")))
  }
  rebuilt <- lapply(fmt, function(f) eval(parse(text = paste(deparse(f), collapse = "\n")), baseenv()))
  path <- tempfile()
  on.exit(unlink(path))
  rebuilt$write(iris, path)
  expect_identical(rebuilt$read(path), iris)
  expect_match(paste(deparse(fmt$write), collapse = " "), "level = 9")
})
