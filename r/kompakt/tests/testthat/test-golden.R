# golden(): helper-need.R.

test_that("the golden R object file (written by kompakt for R 0.1.0) reads back", {
  x <- kpk_read(golden("r-object.kpk"))
  expect_identical(x$ints, 1:10)
  expect_identical(x$text, c("kompakt", NA))
  expect_identical(x$when, as.Date("2026-11-27"))
  expect_identical(x$frame, data.frame(x = c(1.5, 2.5), f = factor(c("a", "b"))))
})

# tests/golden/v3/r-object.kpk: a small object saved by kompakt for R as a compact file
# (format 3.0), written once with kpk_save(golden_small_object(), path).
golden_small_object <- function() list(id = 7L, name = "target_7", ok = TRUE, x = c(1.5, 2.25))

test_that("the golden compact R object file (format 3.0) reads back", {
  path <- golden(file.path("..", "v3", "r-object.kpk"))
  expect_identical(kpk_read(path), golden_small_object())
  expect_identical(kpk_read(path, trusted = FALSE), golden_small_object())
  # A save of the same object today is compact and as small.
  again <- tempfile(fileext = ".kpk")
  on.exit(unlink(again))
  kpk_save(golden_small_object(), again)
  expect_identical(readBin(again, "raw", 6)[5:6], as.raw(c(3, 0)))
  expect_lte(file.size(again), file.size(path))
  expect_error(kpk_read(golden(file.path("..", "v3", "python-object.kpk"))), "Python object saved by kompakt.save")
})

test_that("files of other languages and kinds are refused with a message naming them", {
  expect_error(kpk_read(golden("python-object.kpk")), "Python object saved by kompakt.save")
  expect_error(kpk_read(golden("zstd-3.kpk")), "plain data")
  expect_error(kpk_read(golden(file.path("table", "r-table.kpk"))), "holds a table.*read_kpk_table")
  expect_error(read_kpk_table(golden("r-object.kpk")), "kompakt")
})

# The golden R table (tests/golden/v1/table/r-table.kpk, written once by kompakt for R 0.1.0):
# every column type R writes, NA every 7th row, 40 rows in row groups of 16.
golden_r_table <- function() {
  n <- 40L
  i <- seq_len(n)
  na <- i %% 7L == 0L
  set_na <- function(x) { x[na] <- NA; x }
  # integer64 without bit64: the int64 i * 2^32 + i as the double's bits (NA: INT64_MIN).
  hi <- ifelse(na, NA_integer_, i)
  lo <- ifelse(na, 0L, i)
  big <- structure(readBin(writeBin(c(rbind(lo, hi)), raw()), "double", n), class = "integer64")
  df <- data.frame(
    lgl = set_na(i %% 2L == 0L),
    int = set_na(i * 1000L - 20000L),
    dbl = set_na(c(NaN, Inf, -Inf, -0, i[-(1:4)] / 8)),
    chr = set_na(sprintf("%d caf\u00e9 \u65e5\u672c", i)),
    fct = set_na(factor(c("low", "mid", "high")[i %% 3L + 1L], levels = c("low", "mid", "high"))),
    ord = set_na(factor(c("S", "M", "L")[i %% 3L + 1L], levels = c("S", "M", "L"), ordered = TRUE)),
    day = set_na(as.Date("2026-11-27") + i),
    when = set_na(.POSIXct(1795770000 + i * 3600.5, tz = "Europe/Paris")),
    secs = set_na(as.difftime(i / 4, units = "mins")),
    stringsAsFactors = FALSE
  )
  df$big <- big
  df$bytes <- as.raw(i)
  df
}

test_that("the golden R table (written by kompakt for R 0.1.0) reads back exactly", {
  path <- golden(file.path("table", "r-table.kpk"))
  back <- read_kpk_table(path)
  expected <- golden_r_table()
  expect_identical(back, expected)
  expect_identical(is.nan(back$dbl[1:2]), c(TRUE, FALSE))
  expect_identical(kpk_table_info(path)$rows_per_group, 16)
  expect_identical(read_kpk_table(path, columns = c("when", "fct"), from = 15, to = 18),
                   `rownames<-`(expected[15:18, c("when", "fct")], NULL))
})

if (FALSE) {
  # Writes the golden R table once (from r/kompakt/tests/testthat, with kompakt installed).
  path <- file.path("..", "..", "..", "..", "tests", "golden", "v1", "table", "r-table.kpk")
  stopifnot(!file.exists(path))
  write_kpk_table(golden_r_table(), path, codec = "zstd:3", rows_per_group = 16)
}
