objects <- list(
  null = NULL,
  numbers = c(1.5, NA, -Inf, NaN, 1e300),
  integers = c(1L, NA, .Machine$integer.max),
  logicals = c(TRUE, NA, FALSE),
  text = c("a", NA, "\u00e9t\u00e9", enc2native("plain")),
  complex = complex(real = 1:3, imaginary = -1),
  raw = as.raw(0:255),
  factor = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "hi")),
  ordered = factor(c("b", "a"), levels = c("b", "a"), ordered = TRUE),
  dates = as.Date(c("2026-11-27", NA)),
  times = as.POSIXct(c("2026-11-27 10:00:00", NA), tz = "Europe/Oslo"),
  frame = data.frame(x = 1:3, y = c("a", "b", NA), stringsAsFactors = FALSE),
  nested = list(a = list(b = list(c = 1:3)), f = eval(quote(function(x) x + 1), globalenv()), e = quote(a + b)),
  attributes = structure(1:6, dim = 2:3, dimnames = list(c("r1", "r2"), NULL), note = "kept"),
  long = seq_len(3e6) / 7,
  empty = list(numeric(0), character(0), list())
)

test_that("every kind of object comes back identical, from a file and from memory", {
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  for (name in names(objects)) {
    x <- objects[[name]]
    expect_invisible(kpk_save(x, path))
    expect_identical(kpk_read(path), x, info = name)
    expect_identical(kpk_unserialize(kpk_serialize(x)), x, info = name)
  }
  env <- new.env()
  assign("v", 1:3, envir = env)
  back <- kpk_unserialize(kpk_serialize(env))
  expect_identical(get("v", envir = back), 1:3)
})

test_that("codecs and levels mean what they mean everywhere, and bad ones name the valid ones", {
  x <- rep(c(1.25, 2.5, 3.75), 2e5)
  sizes <- vapply(list(list(NULL, NULL), list("lz4", NULL), list("zstd", 9), list(NULL, 60), list("none", NULL)),
                  function(o) length(kpk_serialize(x, codec = o[[1]], level = o[[2]], threads = 1)), 0)
  expect_lt(sizes[1], sizes[5])
  expect_gt(sizes[5], 8 * length(x))
  for (threads in c(1, 2, 0)) expect_identical(kpk_unserialize(kpk_serialize(x, threads = threads)), x)
  expect_error(kpk_serialize(x, codec = "brotli"), "lz4")
  expect_error(kpk_serialize(x, codec = "zstd:3", level = 4), "zstd")
  expect_error(kpk_serialize(x, level = 101), "0")
  expect_error(kpk_serialize(x, threads = -1), "threads")
  expect_error(kpk_serialize(x, codec = 3), "codec")
})

test_that("saves are atomic: a failed save keeps the old file and leaves nothing beside it", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  path <- file.path(dir, "x.kpk")
  kpk_save("old", path)
  expect_error(kpk_save(1:10, path, codec = "x"), "codec")
  expect_error(kpk_save(1:10, file.path(dir, "no such folder", "x.kpk")), "no such folder")
  expect_identical(kpk_read(path), "old")
  kpk_save("new", path)
  expect_identical(kpk_read(path), "new")
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "x.kpk")
})

test_that("damaged, truncated and foreign files give clear errors", {
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  kpk_save(seq_len(1e6), path)
  bytes <- readBin(path, "raw", file.size(path))
  flipped <- bytes
  flipped[length(bytes) %/% 2] <- as.raw(bitwXor(as.integer(flipped[length(bytes) %/% 2]), 1L))
  expect_error(kpk_unserialize(flipped), "checksum")
  expect_error(kpk_unserialize(bytes[seq_len(length(bytes) - 10)]), "kompakt")
  expect_error(kpk_unserialize(charToRaw("hello, not kompakt")), "not a kompakt file")
  expect_error(kpk_read(file.path(tempdir(), "missing.kpk")), "missing.kpk")
  expect_error(kpk_read(tempdir()), "directory")
  expect_error(kpk_unserialize("text"), "raw vector")
})

test_that("small and large pieces of one object keep their order", {
  # Strings (written a few bytes at a time) between vectors (written in 64 KB pieces).
  x <- list(runif(1e5), "a", as.character(1:3), runif(1e4), c(a = "b"), 1:1e5 + 0L, "z")
  expect_identical(kpk_unserialize(kpk_serialize(x)), x)
  y <- lapply(1:200, function(i) if (i %% 2) runif(3000) else paste("s", i))
  expect_identical(kpk_unserialize(kpk_serialize(y, threads = 2)), y)
})

test_that("sync is always or none, and either saves the same file atomically", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  path <- file.path(dir, "x.kpk")
  for (sync in c("always", "none")) {
    kpk_save(list(sync, 1:3), path, sync = sync)
    expect_identical(kpk_read(path), list(sync, 1:3))
    write_kpk_table(data.frame(s = sync), file.path(dir, "t.kpk"), sync = sync)
    expect_identical(read_kpk_table(file.path(dir, "t.kpk"))$s, sync)
  }
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)), c("t.kpk", "x.kpk"))
  expect_error(kpk_save(1, path, sync = "batched"), "\"always\" (fsync each file) or \"none\"",
               fixed = TRUE, class = "kompakt_option_error")
  expect_error(write_kpk_table(data.frame(a = 1), path, sync = "sometimes"), "\"always\" (fsync",
               fixed = TRUE, class = "kompakt_option_error")
  expect_error(kpk_save(1, path, sync = TRUE), "sync must be NULL or one string")
  expect_error(tar_format_kompakt(sync = "often"), "\"always\" (fsync", fixed = TRUE)
  # The session's default, and the environment's.
  old <- options(kompakt.sync = "never")
  expect_error(kpk_save(1, path), "never")
  options(old)
  withr_env <- Sys.getenv("KOMPAKT_SYNC", unset = NA)
  Sys.setenv(KOMPAKT_SYNC = "nope")
  expect_error(kpk_save(1, path), "KOMPAKT_SYNC", class = "kompakt_option_error")
  if (is.na(withr_env)) Sys.unsetenv("KOMPAKT_SYNC") else Sys.setenv(KOMPAKT_SYNC = withr_env)
  expect_identical(kpk_read(path), list("none", 1:3))
})

test_that("a writer killed mid-save never leaves a torn file, whatever sync says", {
  skip_on_os("windows")
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  path <- file.path(dir, "x.kpk")
  set.seed(7)
  new <- runif(2e6)
  for (sync in c("none", "always")) {
    kpk_save("old", path, sync = sync)
    # A forked R saves over the file again and again until it is killed (SIGKILL: no clean-up
    # of any kind runs), at a moment that falls inside some save.
    job <- parallel::mcparallel({
      repeat kpk_save(new, path, sync = sync)
    })
    Sys.sleep(0.6)
    tools::pskill(job$pid, tools::SIGKILL)
    suppressWarnings(parallel::mccollect(job, wait = TRUE)) # "did not deliver a result": killed
    back <- kpk_read(path)
    expect_true(identical(back, "old") || identical(back, new), info = sync)
    # Whatever the killed writer left beside the file is its temporary file, never the target.
    left <- setdiff(list.files(dir, all.files = TRUE, no.. = TRUE), "x.kpk")
    expect_true(all(grepl("^\\.x\\.kpk\\..*\\.tmp$", left)), info = paste(left, collapse = ", "))
  }
})

test_that("an interrupted save keeps the old file and leaves nothing beside it", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  path <- file.path(dir, "x.kpk")
  kpk_save("old", path)
  big <- runif(5e7)
  # setTimeLimit's error is raised where an interrupt would be: mid-serialization, when the
  # whole save takes several times the limit (synced, so that it does on a fast machine too).
  whole <- system.time(kpk_save(big, file.path(dir, "timing.kpk"), sync = "always"))[["elapsed"]]
  unlink(file.path(dir, "timing.kpk"))
  skip_if(whole < 0.25, "this machine saves too fast to stop a save half way")
  err <- tryCatch({
    setTimeLimit(elapsed = 0.05, transient = TRUE)
    on.exit(setTimeLimit(elapsed = Inf), add = TRUE)
    kpk_save(big, path, sync = "always")
    NULL
  }, error = function(e) e)
  setTimeLimit(elapsed = Inf)
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), "time limit")
  expect_identical(kpk_read(path), "old")
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "x.kpk")
  # And a read stopped the same way leaves the file readable afterwards.
  kpk_save(big, path, codec = "lz4")
  err <- tryCatch({
    setTimeLimit(elapsed = 0.05, transient = TRUE)
    kpk_read(path)
    NULL
  }, error = function(e) e)
  setTimeLimit(elapsed = Inf)
  expect_match(conditionMessage(err), "time limit")
  expect_identical(kpk_read(path), big)
})

test_that("errors are classed by their kind, as every front end names it", {
  f <- tempfile(fileext = ".kpk")
  kpk_save(rnorm(1e4), f, codec = "zstd:3")
  bytes <- readBin(f, "raw", file.size(f))
  bytes[length(bytes) %/% 2] <- xor(bytes[length(bytes) %/% 2], as.raw(0xff))
  writeBin(bytes, f)
  expect_error(kpk_read(f), class = "kompakt_corrupt_error")
  expect_error(kpk_read(tempfile()), class = "kompakt_io_error")
  expect_error(kpk_serialize(1, threads = 1000), "0 (all cores) to 256", fixed = TRUE, class = "kompakt_option_error")
  e <- tryCatch(kpk_serialize(1, codec = "brotli"), kompakt_error = function(e) e)
  expect_s3_class(e, "kompakt_option_error")
})
