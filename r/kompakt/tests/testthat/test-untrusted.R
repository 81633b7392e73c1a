# Untrusted reads: R never runs code a file brings. The hostile payloads are made here, as
# ascii serializations: R's own output with a promise put in (the shape of CVE-2024-27322).

ascii_header <- c("A", "3", "262658", "197888", "5", "UTF-8")

# The items (lines) of a value's ascii serialization, without its header.
ascii_items <- function(x) {
  lines <- strsplit(rawToChar(serialize(x, NULL, ascii = TRUE)), "\n", fixed = TRUE)[[1]]
  stopifnot(identical(lines[1:6], ascii_header))
  lines[-(1:6)]
}

as_stream <- function(items) paste0(paste(c(ascii_header, items), collapse = "\n"), "\n")

# A promise whose value is unbound, to be evaluated in the global environment when the value is
# first used: `code` runs then.
promise_items <- function(code) c("1029", "253", "252", ascii_items(code))

# `x` serialized with the string "KPK_PLACEHOLDER" in it replaced by a promise of `code`.
with_promise <- function(x, code) {
  items <- ascii_items(x)
  at <- which(items == "KPK_PLACEHOLDER")
  stopifnot(length(at) == 1L, identical(items[(at - 4L):(at - 1L)], c("16", "1", "262153", "15")))
  c(items[seq_len(at - 5L)], promise_items(code), items[-seq_len(at)])
}

# Code that leaves a trace when it runs: a file and a global variable.
payload <- function(marker) {
  bquote({
    file.create(.(marker))
    assign("kpk_hostile_ran", TRUE, envir = globalenv())
  })
}

expect_not_run <- function(marker) {
  expect_false(file.exists(marker))
  expect_false(exists("kpk_hostile_ran", envir = globalenv()))
}

# A kompakt object file (in a store folder) whose serialized stream is `stream`: written
# through the storr driver, which stores bytes as they are, with incompressible padding after
# the stream (R and the checker stop at the end of its value) so the store keeps it as a file.
object_file <- function(stream) {
  dir <- tempfile("kpk-hostile-")
  drv <- driver_kompakt(dir)
  set.seed(1)
  drv$set_object("h", c(charToRaw(stream), as.raw(sample(0:255, 300000, TRUE))))
  files <- list.files(file.path(dir, "objects"), recursive = TRUE, full.names = TRUE)
  stopifnot(length(files) == 1L)
  list(dir = dir, file = files[[1]])
}

test_that("the hostile payload is live: base R's unserialize runs it", {
  skip_if(getRversion() >= "4.4.0", "R 4.4 no longer returns promises from unserialize")
  marker <- tempfile()
  x <- unserialize(charToRaw(as_stream(promise_items(payload(marker)))))
  force(x)
  expect_true(file.exists(marker))
  rm("kpk_hostile_ran", envir = globalenv())
})

test_that("a table's R metadata holding a promise is never run", {
  marker <- tempfile()
  path <- tempfile(fileext = ".kpk")
  top <- as_stream(promise_items(payload(marker)))
  nested <- as_stream(with_promise(list(format = 1L, class = "data.frame", row.names = NULL,
                                        types = c(x = "double"), attributes = list(x = "KPK_PLACEHOLDER")),
                                   payload(marker)))
  for (meta in c(top, nested)) {
    kompakt:::.write_columns(data.frame(x = c(1.5, 2)), path,
                             kompakt:::.table_options(NULL, NULL, 0L, metadata = c(r = meta)), append = FALSE)
    expect_warning(back <- read_kpk_table(path), "a promise \\(code that runs when the value is used\\)")
    expect_identical(back, data.frame(x = c(1.5, 2)))
    expect_warning(info <- kpk_table_info(path), "R metadata was not read")
    expect_identical(info$rows, 2)
    expect_warning(t <- kpk_table(path), "R metadata was not read")
    expect_identical(t[2, "x", drop = TRUE], 2)
    expect_warning(read_kpk_table(readBin(path, "raw", file.size(path))), "a promise")
    expect_not_run(marker)
  }
  # A closure in the metadata's attributes is refused too (it would run only when called).
  fun <- as_stream(ascii_items(list(format = 1L, class = "data.frame", row.names = NULL, types = c(x = "double"),
                                    attributes = list(x = list(f = function() 1)))))
  kompakt:::.write_columns(data.frame(x = 1.5), path,
                           kompakt:::.table_options(NULL, NULL, 0L, metadata = c(r = fun)), append = FALSE)
  expect_warning(read_kpk_table(path), "a function")
  # Metadata R writes still passes: no warning, every type back.
  df <- data.frame(f = factor(c("a", "b")), d = as.Date("2024-01-01") + 0:1, s = c("x", NA))
  write_kpk_table(df, path)
  expect_silent(back <- read_kpk_table(path))
  expect_identical(back, df)
})

test_that("kpk_read(trusted = FALSE) refuses promises and functions before R sees them", {
  marker <- tempfile()
  for (stream in c(as_stream(promise_items(payload(marker))),
                   as_stream(with_promise(list(a = 1, b = "KPK_PLACEHOLDER"), payload(marker))))) {
    hostile <- object_file(stream)
    expect_error(kpk_read(hostile$file, trusted = FALSE),
                 "is not read with trusted = FALSE: .*a promise \\(code that runs when the value is used\\)")
    bytes <- readBin(hostile$file, "raw", file.size(hostile$file))
    expect_error(kpk_unserialize(bytes, trusted = FALSE), "a promise")
    expect_error(kpk_store(hostile$dir, trusted = FALSE)$get("h", namespace = "storr:objects"), "a promise")
    expect_error(kpk_store(hostile$dir)$get("h", namespace = "storr:objects", trusted = FALSE), "a promise")
    expect_error(driver_kompakt(hostile$dir, trusted = FALSE)$get_object("h"), "a promise")
    expect_error(driver_kompakt(hostile$dir, trusted = FALSE)$mget_object("h"), "a promise")
    expect_not_run(marker)
  }
  path <- tempfile(fileext = ".kpk")
  kpk_save(list(f = function() file.create(marker)), path)
  expect_error(kpk_read(path, trusted = FALSE), "a function \\(R code, which runs when it is called\\)")
  e <- new.env()
  delayedAssign("x", file.create(marker), assign.env = e)
  kpk_save(e, path)
  expect_error(kpk_read(path, trusted = FALSE), "an environment")
  # A formula made inside a function brings that function's environment: refused.
  kpk_save(local(y ~ x), path)
  expect_error(kpk_read(path, trusted = FALSE), "an environment")
  kpk_save(quote(f(x)), path)
  expect_identical(kpk_read(path, trusted = FALSE), quote(f(x)))
  kpk_save(asNamespace("stats"), path)
  expect_error(kpk_read(path, trusted = FALSE), "a package namespace")
  expect_error(kpk_read(path, trusted = NA), "trusted must be TRUE or FALSE")
  expect_error(kpk_store(tempfile(), trusted = "no"), "trusted must be TRUE or FALSE")
  expect_not_run(marker)
  # A stream R does not write (an item of type 18) is an error too, naming the damage.
  odd <- object_file(as_stream(c("19", "1", "18")))
  expect_error(kpk_read(odd$file, trusted = FALSE), "damaged or not R's: item type 18")
})

test_that("plain data round trips with trusted = FALSE", {
  values <- list(
    frame = data.frame(i = c(1L, NA), x = c(0.5, NaN), s = c("a", NA), stringsAsFactors = FALSE),
    factor = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "hi")),
    ordered = factor(c("b", "a"), ordered = TRUE),
    date = as.Date("2024-02-29") + c(0, NA, 365),
    time = as.POSIXct(c(0, 1e9, NA), origin = "1970-01-01", tz = "Europe/Paris"),
    list = list(a = 1, b = list(c = "x", d = NULL), e = c(TRUE, NA)),
    seq = 1:10,
    realseq = 1:3 + 0,
    strings = as.character(1:5),
    sorted = sort(c(3, 1, 2)),
    matrix = matrix(1:6, 2, dimnames = list(c("r1", "r2"), c("a", "b", "c"))),
    na_strings = c(NA_character_, "", "\u00e9", NA),
    long = seq_len(3e6) * 2L,
    doubles = rnorm(2e5),
    formula = stats::as.formula("y ~ x + log(z)", env = globalenv()),
    complex = complex(real = 1:3, imaginary = -1),
    raw = as.raw(0:255),
    difftime = as.difftime(c(1, 2), units = "hours"),
    nested = list(list(list(list(1L))))
  )
  path <- tempfile(fileext = ".kpk")
  for (name in names(values)) {
    x <- values[[name]]
    kpk_save(x, path)
    expect_identical(kpk_read(path, trusted = FALSE), x, label = name)
    expect_identical(kpk_unserialize(kpk_serialize(x), trusted = FALSE), x, label = name)
  }
  st <- kpk_store(tempfile(), trusted = FALSE)
  st$set("frame", values$frame)
  expect_identical(st$get("frame"), values$frame)
  expect_identical(st$mget(c("frame", "frame"))[[2]], values$frame)
  st$close()
  if (requireNamespace("storr", quietly = TRUE)) {
    s <- storr_kompakt(tempfile(), trusted = FALSE)
    s$set("a", values$list)
    expect_identical(s$get("a"), values$list)
    s$destroy()
  }
})
