golden <- function(name) {
  # The repository's golden files: r/kompakt/tests/testthat -> tests/golden/v1.
  path <- file.path("..", "..", "..", "..", "tests", "golden", "v1", name)
  if (!file.exists(path)) skip(paste("golden file not found:", path))
  path
}

test_that("the golden R object file (written by kompakt for R 0.1.0) reads back", {
  x <- kpk_read(golden("r-object.kpk"))
  expect_identical(x$ints, 1:10)
  expect_identical(x$text, c("kompakt", NA))
  expect_identical(x$when, as.Date("2026-11-27"))
  expect_identical(x$frame, data.frame(x = c(1.5, 2.5), f = factor(c("a", "b"))))
})

test_that("files of other languages and kinds are refused with a message naming them", {
  expect_error(kpk_read(golden("python-object.kpk")), "Python object saved by kompakt.save")
  expect_error(kpk_read(golden("zstd-3.kpk")), "plain data")
})
