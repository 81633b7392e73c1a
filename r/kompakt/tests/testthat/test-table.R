# Suggested packages are required when the project's test script runs (helper-need.R).
need <- need_package

roundtrip <- function(df, ...) {
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path, ...)
  read_kpk_table(path)
}

# Every base column type, with NA at the first, a middle and the last position.
all_types <- function(n = 50000L) {
  na_at <- c(1L, n %/% 2L, n)
  with_na <- function(x) { x[na_at] <- NA; x }
  when <- as.POSIXct("2026-11-27 10:00:00", tz = "Europe/Paris") + seq_len(n) * 3600
  data.frame(
    lgl = with_na(rep(c(TRUE, FALSE, TRUE), length.out = n)),
    int = with_na(seq_len(n) - 1000L),
    dbl = with_na(c(0, NaN, Inf, -Inf, -0, runif(n - 5L))),
    chr = with_na(sprintf("row %d: caf\u00e9 \u65e5\u672c", seq_len(n))),
    fct = with_na(factor(sample(c("low", "mid", "high"), n, TRUE), levels = c("low", "mid", "high"))),
    ord = with_na(factor(sample(c("S", "M", "L"), n, TRUE), levels = c("S", "M", "L"), ordered = TRUE)),
    day = with_na(as.Date("2020-01-01") + seq_len(n)),
    when = with_na(when),
    secs = with_na(as.difftime(seq_len(n) / 4, units = "mins")),
    stringsAsFactors = FALSE
  )
}

test_that("every base column type round trips exactly, NA at every position", {
  df <- all_types()
  back <- roundtrip(df)
  expect_identical(back, df)
  expect_identical(attr(back$when, "tzone"), "Europe/Paris")
  expect_identical(units(back$secs), "mins")
  # NA and NaN stay apart (identical() does not tell them apart); so do the zeros' signs.
  expect_identical(is.nan(back$dbl[1:2]), c(FALSE, TRUE))
  expect_identical(is.na(back$dbl[1:2]), c(TRUE, TRUE))
  expect_identical(1 / back$dbl[5], -Inf)
})

test_that("columns that Arrow's types cannot hold exactly still round trip", {
  df <- data.frame(
    frac_day = structure(c(18000.5, NA, 1), class = "Date"),
    int_day = structure(c(1L, NA, 19000L), class = "Date"),
    nano = as.POSIXct(c(1.123456789, NA, 1e9 + 0.1), origin = "1970-01-01", tz = "UTC"),
    no_tz = .POSIXct(c(0, 1.5, NA)),
    inf_day = structure(c(Inf, 1, NA), class = "Date"),
    raw = as.raw(c(0, 127, 255)),
    labelled = structure(c(1.5, 2, 3), label = "weight in kg", note = list(1, "a"))
  )
  expect_identical(roundtrip(df), df)
})

test_that("integer64, data.table keys and tibbles come back as they were written", {
  need("bit64")
  need("data.table")
  need("tibble")
  big <- bit64::as.integer64(c("9007199254740993", NA, "-5"))
  df <- data.frame(id = big, x = c(1, 2, 3))
  expect_identical(roundtrip(df), df)

  dt <- data.table::data.table(k = c(1L, 1L, 2L, NA), s = c("b", "a", "c", "d"), v = 1:4)
  data.table::setkey(dt, k, s)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(dt, path)
  expect_identical(kpk_table_info(path)$sorted_by, c("k", "s"))
  back <- read_kpk_table(path)
  expect_true(data.table::is.data.table(back))
  expect_identical(data.table::key(back), c("k", "s"))
  expect_equal(back, dt, ignore_attr = ".internal.selfref")
  # A real data.table: room for columns added by reference, as setDT() makes it (set(), not
  # :=, which needs data.table attached).
  data.table::set(back, j = "w", value = back$v * 2L)
  expect_identical(back$w, dt$v * 2L)
  expect_identical(read_kpk_table(path, columns = c("k", "s", "v"), from = 2, to = 3),
                   data.table::setkey(data.table::setDT(as.data.frame(dt)[2:3, ]), k, s))
  # Rows taken by position, out of order, are not in the key's order: no key.
  taken <- kpk_table(path)[c(3, 1), ]
  expect_true(data.table::is.data.table(taken))
  expect_null(data.table::key(taken))
  expect_identical(taken$s, dt$s[c(3, 1)])
  # A frame read as a data.table on request, keyed by the recorded order.
  write_kpk_table(as.data.frame(dt), path, sorted_by = "k")
  expect_identical(data.table::key(read_kpk_table(path, as.data.table = TRUE)), "k")
  # A key kompakt orders otherwise (factor levels not in byte order, NaN) is recorded up to it.
  odd <- data.table::data.table(a = c(1L, 1L, 2L), f = factor(c("z", "a", "a"), levels = c("z", "a")),
                                d = c(NaN, 1, 2))
  data.table::setkey(odd, a, f)
  write_kpk_table(odd, path)
  expect_identical(kpk_table_info(path)$sorted_by, "a")
  data.table::setkey(odd, d)
  write_kpk_table(odd, path)
  expect_identical(kpk_table_info(path)$sorted_by, character())
  expect_equal(read_kpk_table(path), odd, ignore_attr = c(".internal.selfref", "sorted"))
  # Rows out of the recorded order are refused, naming the column.
  bad <- data.table::data.table(k = c(2L, 1L))
  data.table::setattr(bad, "sorted", "k")
  expect_error(write_kpk_table(bad, path), "k")

  tb <- tibble::tibble(a = 1:3, b = letters[1:3])
  expect_identical(roundtrip(tb), tb)
})

test_that("list columns of atomic vectors round trip, NULL rows and empty vectors included", {
  n <- 20000L
  df <- data.frame(id = seq_len(n))
  df$ints <- lapply(seq_len(n), function(i) if (i %% 9 == 0) NULL else seq_len(i %% 4) * i)
  df$reals <- lapply(seq_len(n), function(i) c(i / 2, NA, NaN)[seq_len(i %% 3)])
  df$words <- lapply(seq_len(n), function(i) if (i %% 5 == 0) character() else c("a", NA, "café")[seq_len(i %% 3 + 1)])
  df$flags <- lapply(seq_len(n), function(i) c(TRUE, NA)[seq_len(i %% 2 + 1)])
  df$nothing <- rep(list(NULL), n)
  back <- roundtrip(df, rows_per_group = 1000)
  expect_identical(back, df)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path)
  expect_identical(read_kpk_table(path, columns = "words", from = 9999, to = 10001)$words, df$words[9999:10001])
  expect_identical(kpk_table_info(path)$columns$type[2], "list")
})

test_that("empty tables, zero-column and zero-row frames round trip", {
  expect_identical(roundtrip(data.frame()), data.frame())
  zero_rows <- all_types()[0, ]
  expect_identical(roundtrip(zero_rows), zero_rows)
  no_cols <- data.frame(row.names = 1:5)
  back <- roundtrip(no_cols)
  expect_identical(dim(back), c(5L, 0L))
  all_na <- data.frame(a = c(NA, NA), b = c(NA_character_, NA), f = factor(c(NA, NA), levels = "x"))
  expect_identical(roundtrip(all_na), all_na)
  named <- data.frame(x = 1:3, row.names = c("a", "b", "c"))
  expect_identical(roundtrip(named), named)
  expect_identical(roundtrip(mtcars), mtcars)
  expect_identical(roundtrip(iris), iris)
})

test_that("columns and row ranges read only what they ask for, equal to slicing the whole", {
  df <- all_types(100000L)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path, rows_per_group = 4096)
  part <- read_kpk_table(path, columns = c("fct", "chr", "when"), from = 5000, to = 70000)
  expected <- df[5000:70000, c("fct", "chr", "when")]
  rownames(expected) <- NULL
  expect_identical(part, expected)
  expect_identical(read_kpk_table(path, columns = 2, from = 100000, to = 100000), data.frame(int = df$int[100000]))
  expect_identical(nrow(read_kpk_table(path, from = 7, to = 6)), 0L)
  expect_error(read_kpk_table(path, columns = "nope"), "no column 'nope'.*lgl, int")
  expect_error(read_kpk_table(path, from = 0), "not in 1..100000")
  # Past the end, as read_fst(): the rows there.
  expect_identical(read_kpk_table(path, columns = 2, from = 99999, to = 100005)$int, df$int[99999:100000])
  expect_identical(nrow(read_kpk_table(path, from = 100001, to = 100005)), 0L)
  expect_error(read_kpk_table(path, from = 100002, to = 100005), "not in 1..100000")
})

test_that("the lazy handle indexes like a data frame", {
  df <- all_types(40000L)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path, rows_per_group = 1000)
  t <- kpk_table(path)
  expect_identical(dim(t), c(40000L, ncol(df)))
  expect_identical(names(t), names(df))
  expect_identical(t$chr, df$chr)
  expect_identical(t[["fct"]], df$fct)
  slice <- t[1000:2000, c("int", "ord")]
  expected <- df[1000:2000, c("int", "ord")]
  rownames(expected) <- NULL
  expect_identical(slice, expected)
  picked <- t[c(30000, 5, 17), "day"]
  expect_identical(picked$day, df$day[c(30000, 5, 17)])
  expect_identical(t["lgl"], df["lgl"])
  expect_identical(as.data.frame(t), df)
  expect_output(print(t), "40000 rows")
  expect_error(t[0.5, ], "positions")
  # Rows that are not one range are taken by number, each row group decoded once.
  rows <- c(39999, 3, 17, 3, 25000, 1, 40000)
  expected <- df[rows, ]
  rownames(expected) <- NULL
  expect_identical(t[rows, ], expected)
  expect_identical(t[5:1, "chr", drop = TRUE], df$chr[5:1])
  pick <- rep(FALSE, 40000)
  pick[c(2, 39000)] <- TRUE
  expected <- df[pick, c("int", "fct")]
  rownames(expected) <- NULL
  expect_identical(t[pick, c("int", "fct")], expected)
  # Character row names follow their rows; repeats get unique names as in a data frame.
  named <- data.frame(x = c(1.5, 2.5, NA, 4.5), s = c("a", NA, "c", "d"), row.names = c("w", "x", "y", "z"))
  write_kpk_table(named, path)
  expect_identical(kpk_table(path)[c(4, 2, 4), ], named[c(4, 2, 4), ])
})

test_that("appends add rows in place; the info describes the table from its index", {
  df <- all_types(10000L)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path)
  append_kpk_table(df[1:100, ], path)
  append_kpk_table(df[101:250, ], path)
  back <- read_kpk_table(path)
  expected <- rbind(df, df[1:250, ])
  rownames(expected) <- NULL
  expect_identical(back, expected)
  info <- kpk_table_info(path)
  expect_identical(info$rows, 10250)
  expect_identical(info$columns$name, names(df))
  expect_identical(info$columns$type[info$columns$name == "fct"], "dictionary<int32, utf8>")
  expect_identical(info$columns$type[info$columns$name == "when"], "timestamp[u, Europe/Paris]")
  expect_true(all(info$columns$stored_bytes > 0))
  expect_output(print(info), "10250 rows")
  # Rows of another shape are refused; the table is unchanged.
  expect_error(append_kpk_table(data.frame(x = 1), path), "append")
  expect_identical(kpk_table_info(path)$rows, 10250)
})

test_that("a table read again after it changed gives its new contents", {
  # Opening a file whose times are 2 s old reuses the index read before (the open cache); a
  # replaced, appended or rewritten file must still be read afresh.
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  a <- data.frame(x = 1:20000, y = as.character(1:20000))
  b <- data.frame(x = 20000:1, y = as.character(20000:1))
  write_kpk_table(a, path)
  Sys.sleep(2.2)
  expect_identical(read_kpk_table(path, from = 5, to = 6)$x, 5:6)
  expect_identical(read_kpk_table(path), a)
  write_kpk_table(b, path) # a new file in its place
  expect_identical(read_kpk_table(path), b)
  append_kpk_table(a[1:3, ], path)
  expect_identical(kpk_table_info(path)$rows, 20003)
  expect_identical(read_kpk_table(path, from = 20001)$x, 1:3)
  # Rewritten in place, same size: a block's checksum fails rather than old data coming back.
  bytes <- readBin(path, "raw", file.size(path))
  at <- 40L
  con <- file(path, "r+b")
  seek(con, at - 1L, rw = "write")
  writeBin(xor(bytes[at], as.raw(1)), con)
  close(con)
  expect_error(read_kpk_table(path), "kompakt")
})

test_that("a table reads from a raw vector in memory", {
  df <- all_types(5000L)
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path)
  bytes <- readBin(path, "raw", file.size(path))
  expect_identical(read_kpk_table(bytes), df)
  expect_identical(read_kpk_table(bytes, columns = "chr", from = 10, to = 12)$chr, df$chr[10:12])
  t <- kpk_table(bytes)
  rm(bytes)
  gc()
  expect_identical(t[4999:5000, "int"]$int, df$int[4999:5000])
})

test_that("what a table cannot hold, and damaged files, are errors that name them", {
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  df <- data.frame(a = 1:2)
  df$l <- list(1:2, "x")
  expect_error(write_kpk_table(df, path), "column 'l' is of type list")
  df <- data.frame(a = 1:2)
  df$m <- matrix(1:4, 2)
  expect_error(write_kpk_table(df, path), "column 'm'")
  lt <- data.frame(t = 1:2)
  lt$t <- as.POSIXlt(c("2026-01-01", "2026-01-02"), tz = "UTC")
  expect_error(write_kpk_table(lt, path), "column 't'")
  expect_error(write_kpk_table(1:3, path), "data frame")
  # An error half-way through building the columns: nothing written, the next write works.
  bad <- data.frame(s = c("a", "b"), f = structure(c(1L, 5L), levels = c("a", "b"), class = "factor"))
  expect_error(write_kpk_table(bad, path), "column 'f': factor code 5 has no level")
  expect_false(file.exists(path))
  write_kpk_table(data.frame(s = c("a", "b")), path)
  expect_identical(read_kpk_table(path)$s, c("a", "b"))
  unlink(path)
  write_kpk_table(all_types(3000L), path)
  bytes <- readBin(path, "raw", file.size(path))
  for (cut in c(10L, length(bytes) %/% 2L, length(bytes) - 3L)) {
    expect_error(read_kpk_table(bytes[seq_len(cut)]), "kompakt")
  }
  flipped <- bytes
  flipped[length(bytes) %/% 3L] <- xor(flipped[length(bytes) %/% 3L], as.raw(4))
  expect_error(read_kpk_table(flipped), "kompakt")
  # R metadata of another shape (a file may come from anywhere): a warning, the stored types.
  for (attrs in list(list(x = "oops"), list(x = list(1)), list(x = list(a = 1, 2)))) {
    odd <- rawToChar(serialize(list(format = 1L, class = "data.frame", row.names = NULL,
                                    types = c(x = "double"), attributes = attrs), NULL, ascii = TRUE))
    kompakt:::.write_columns(data.frame(x = 1.5), path,
                             kompakt:::.table_options(NULL, NULL, 0L, metadata = c(r = odd)), append = FALSE)
    expect_warning(back <- read_kpk_table(path), "R metadata is not readable")
    expect_identical(back$x, 1.5)
  }
  expect_error(read_kpk_table(tempfile()), "cannot read")
})

test_that("columns of several conversion chunks round trip on any number of threads", {
  # The C glue converts numbers in chunks of 2^18 rows on worker threads: NA on each side of
  # every chunk boundary, a row count that is not a multiple of 8, and a bad factor code in the
  # last chunk (found by a worker, reported by R's thread).
  need("bit64")
  n <- 3L * 2^18 + 5L
  edges <- c(1L, 2^18 + 0:1, 2 * 2^18 + 0:1, n - 4L, n)
  with_na <- function(x) { x[edges] <- NA; x }
  df <- data.frame(
    lgl = with_na(rep(c(TRUE, FALSE), length.out = n)),
    int = with_na(seq_len(n)),
    dbl = with_na(seq_len(n) / 8),
    fct = with_na(factor(rep(c("a", "b", "c"), length.out = n))),
    full = seq_len(n) * 2.5
  )
  df$i64 <- bit64::as.integer64(df$int) * 3L
  for (threads in c(1, 2, 3)) expect_identical(roundtrip(df, threads = threads), df)
  bad <- df["fct"]
  codes <- unclass(bad$fct)
  codes[n - 1L] <- 4L
  bad$fct <- structure(codes, levels = c("a", "b", "c"), class = "factor")
  path <- tempfile(fileext = ".kpk")
  expect_error(write_kpk_table(bad, path), "column 'fct': factor code 4 has no level")
  expect_false(file.exists(path))

  # A write goes to the C API as a stream of slices of whole writer rounds (here 3 slices of
  # 17 rounds of 16 groups of 1000 rows), a helper thread converting the next slices while the
  # last is encoded: the bytes do not depend on the threads, and a bad code in a later slice
  # fails the write there (through the C API, whose message names the file), leaving no file.
  files <- vapply(c(1, 2, 3), function(threads) {
    p <- tempfile(fileext = ".kpk")
    write_kpk_table(df, p, threads = threads, rows_per_group = 1000)
    p
  }, "")
  bytes <- lapply(files, function(p) readBin(p, "raw", file.size(p)))
  expect_identical(bytes[[2]], bytes[[1]])
  expect_identical(bytes[[3]], bytes[[1]])
  expect_identical(read_kpk_table(files[[2]]), df)
  bad <- df["fct"]
  codes <- unclass(bad$fct)
  codes[300000L] <- 7L
  bad$fct <- structure(codes, levels = c("a", "b", "c"), class = "factor")
  expect_error(write_kpk_table(bad, path, rows_per_group = 1000), "cannot write.*column 'fct': factor code 7 has no level")
  expect_false(file.exists(path))
})

test_that("a table rewritten in place is read as it now is, not as it was", {
  # The schema and R metadata of the table read last are kept under its fingerprint.
  path <- tempfile(fileext = ".kpk")
  other <- tempfile(fileext = ".kpk")
  on.exit(unlink(c(path, other)))
  a <- data.frame(x = 1:3, d = as.Date("2026-01-01") + 0:2)
  b <- data.frame(x = c("p", "q"), d = factor(c("u", "v")), stringsAsFactors = FALSE)
  write_kpk_table(a, path)
  write_kpk_table(b, other)
  for (round in 1:2) {
    expect_identical(read_kpk_table(path, columns = "d", from = 2, to = 3), a[2:3, "d", drop = FALSE],
                     ignore_attr = "row.names")
    expect_identical(read_kpk_table(other), b)
  }
  write_kpk_table(b, path)
  expect_identical(read_kpk_table(path), b)
  expect_identical(read_kpk_table(path, columns = "d"), b["d"])
  write_kpk_table(a, path)
  expect_identical(read_kpk_table(path), a)
  # A lazy table read after another table was (same columns asked): its own columns.
  lazy <- kpk_table(path)
  expect_identical(read_kpk_table(other, columns = "d"), b["d"])
  expect_identical(lazy[, "d"], a["d"])
})

test_that("property: random frames round trip", {
  set.seed(31)
  for (trial in 1:25) {
    n <- sample(c(0L, 1L, 7L, 1000L, 20000L), 1)
    gen <- list(
      function() sample(c(TRUE, FALSE, NA), n, TRUE),
      function() sample(c(-.Machine$integer.max, 0L, .Machine$integer.max, NA), n, TRUE),
      function() sample(c(rnorm(5), NA, NaN, Inf), n, TRUE),
      function() sample(c("", "a", "\u00e9t\u00e9", strrep("x", 300), NA), n, TRUE),
      function() factor(sample(c(letters[1:4], NA), n, TRUE), levels = letters[4:1]),
      function() as.Date("1900-01-01") + sample(c(-1e5, 0, 5e4, NA), n, TRUE),
      function() as.POSIXct(sample(c(0, 1.25, -86400.5, NA), n, TRUE), origin = "1970-01-01", tz = "Asia/Tokyo")
    )
    k <- sample(length(gen), sample(1:5, 1), TRUE)
    df <- as.data.frame(setNames(lapply(gen[k], function(g) g()), paste0("c", seq_along(k))),
                        stringsAsFactors = FALSE)
    expect_identical(roundtrip(df, rows_per_group = sample(c(1, 100, 16384), 1)), df)
  }
})

test_that("R and Python read each other's tables as their natural types", {
  python <- Sys.getenv("KOMPAKT_PYTHON_BIN")
  if (!nzchar(python)) {
    if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) stop("KOMPAKT_PYTHON_BIN is required")
    skip("KOMPAKT_PYTHON_BIN is not set")
  }
  dir <- tempfile("cross")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  from_r <- file.path(dir, "from_r.kpk")
  df <- all_types(1000L)
  write_kpk_table(df, from_r)
  script <- file.path(dir, "check.py")
  writeLines(c(
    "import sys, datetime, math, kompakt, pandas as pd, pyarrow as pa",
    "t = kompakt.read_table(sys.argv[1], to='arrow')",
    "s = t.schema",
    "assert s.field('lgl').type == pa.bool_(), s",
    "assert s.field('int').type == pa.int32()",
    "assert s.field('fct').type == pa.dictionary(pa.int32(), pa.string()), s.field('fct').type",
    "assert s.field('ord').type.ordered",
    "assert s.field('day').type == pa.date32()",
    "assert s.field('when').type == pa.timestamp('us', tz='Europe/Paris'), s.field('when').type",
    "df = t.to_pandas()",
    "assert df['fct'].dtype == 'category' and list(df['fct'].cat.categories) == ['low', 'mid', 'high']",
    "assert df['int'].isna().tolist()[:2] == [True, False] and df['int'][1] == 1 - 1000 + 1",
    "assert df['chr'][1] == 'row 2: caf\\u00e9 \\u65e5\\u672c' and df['chr'].isna()[0]",
    "assert str(df['when'].dt.tz) == 'Europe/Paris'",
    "assert df['when'][1] == pd.Timestamp('2026-11-27 12:00:00', tz='Europe/Paris'), df['when'][1]",
    "assert df['day'][1] == datetime.date(2020, 1, 3), df['day'][1]",
    "assert math.isnan(df['dbl'][0]) and df['dbl'][2] == math.inf",
    "assert df['secs'][1] == 0.5",
    "out = pd.DataFrame({",
    "  'i64': pd.array([1, None, 2**40], dtype='Int64'),",
    "  'small': pd.array([1, 2, None], dtype='Int64'),",
    "  'f': pd.array([1.5, None, 3.0], dtype='Float64'),",
    "  's': ['x', None, 'caf\\u00e9'],",
    "  'cat': pd.Categorical(['b', None, 'a'], categories=['b', 'a'], ordered=True),",
    "  'ts': pd.to_datetime(['2026-01-01 00:00:01.5', None, '1969-12-31'], format='ISO8601').tz_localize('America/New_York'),",
    "  'naive': pd.to_datetime(['2026-01-01', None, '2000-02-29 12:00'], format='ISO8601'),",
    "  'd': [datetime.date(2026, 1, 1), None, datetime.date(1900, 3, 1)],",
    "  'b': [True, None, False],",
    "  'u8': pd.array([0, 255, None], dtype='UInt8'),",
    "  'f32': pd.array([0.5, None, -2], dtype='Float32'),",
    "  'dur': pd.to_timedelta(['1s', None, '1500ms']),",
    "  'lists': [[1, 2], None, []],",
    "})",
    "kompakt.write_table(out, sys.argv[2])",
    "odd = pa.table({'n': [1, 2], 't': pa.array([datetime.time(1, 2), None], pa.time64('us'))})",
    "kompakt.write_table(odd, sys.argv[2] + '.odd')",
    "print('ok')"), script)
  from_py <- file.path(dir, "from_py.kpk")
  out <- system2(python, c(shQuote(script), shQuote(from_r), shQuote(from_py)), stdout = TRUE, stderr = TRUE)
  expect_identical(tail(out, 1), "ok", info = paste(out, collapse = "\n"))
  back <- read_kpk_table(from_py)
  # A type R has no vector for is an error naming the column; the others still read.
  expect_error(read_kpk_table(paste0(from_py, ".odd")), "column 't' has Arrow type 'ttu'.*columns =")
  expect_identical(read_kpk_table(paste0(from_py, ".odd"), columns = "n")$n, 1:2)
  need("bit64")
  expect_identical(class(back$i64), "integer64")
  expect_identical(as.character(back$i64), c("1", NA, "1099511627776"))
  expect_identical(back$small, c(1L, 2L, NA))
  expect_identical(back$f, c(1.5, NA, 3))
  expect_identical(back$s, c("x", NA, "caf\u00e9"))
  expect_identical(back$cat, factor(c("b", NA, "a"), levels = c("b", "a"), ordered = TRUE))
  expect_identical(attr(back$ts, "tzone"), "America/New_York")
  expect_identical(as.numeric(back$ts), c(as.numeric(as.POSIXct("2026-01-01 00:00:01.5", tz = "America/New_York")),
                                          NA, as.numeric(as.POSIXct("1969-12-31", tz = "America/New_York"))))
  expect_identical(back$naive, .POSIXct(c(1767225600, NA, 951825600), tz = "UTC"))
  expect_identical(back$d, as.Date(c("2026-01-01", NA, "1900-03-01")))
  expect_identical(back$b, c(TRUE, NA, FALSE))
  expect_identical(back$u8, c(0L, 255L, NA))
  expect_identical(back$f32, c(0.5, NA, -2))
  expect_identical(back$dur, as.difftime(c(1, NA, 1.5), units = "secs"))
  expect_identical(back$lists, list(c(1, 2), NULL, numeric()))
  # The command line reads R's table too.
  cli <- Sys.getenv("KOMPAKT_BIN")
  if (nzchar(cli)) {
    expect_match(paste(system2(cli, c("head", shQuote(from_r)), stdout = TRUE), collapse = "\n"), "row 2: caf")
    expect_identical(system2(cli, c("verify", shQuote(from_r)), stdout = FALSE), 0L)
    # Text pages from R take zstd, where kompakt's default is LZ4 (see write_kpk_table).
    inspect <- system2(cli, c("inspect", shQuote(from_r)), stdout = TRUE)
    expect_match(grep("^chr ", inspect, value = TRUE), "plain [0-9]+.*zstd [0-9]+$")
  }
})
