# Stores, files and tables on object storage, against a real S3-compatible server: moto, run by
# the project's Python (KOMPAKT_PYTHON_BIN) on the loopback address. The project's test script
# sets KOMPAKT_REQUIRE_SUGGESTS: there, a missing server is a failure, not a skip.

python_with_moto <- function() {
  python <- Sys.getenv("KOMPAKT_PYTHON_BIN")
  ok <- nzchar(python) &&
    suppressWarnings(system2(python, c("-c", shQuote("import moto.server, boto3")), stdout = FALSE, stderr = FALSE)) == 0
  if (!ok) {
    if (nzchar(Sys.getenv("KOMPAKT_REQUIRE_SUGGESTS"))) stop("these tests need KOMPAKT_PYTHON_BIN with moto and boto3")
    skip("no Python with moto (KOMPAKT_PYTHON_BIN)")
  }
  python
}

# Starts a server with one bucket for the calling test, and points this process's AWS settings
# (and the cache folders of stores) at it until the test ends.
local_s3 <- function(bucket = "kompakt-r", env = parent.frame()) {
  python <- python_with_moto()
  dir <- tempfile("s3-")
  dir.create(dir)
  server <- start_s3_server(python, dir, bucket)
  withr::defer(server$stop(), envir = env)
  withr::local_envvar(c(server$env, XDG_CACHE_HOME = file.path(dir, "cache")), .local_envir = env)
  list(python = python, endpoint = server$env[["AWS_ENDPOINT_URL"]], bucket = bucket,
       url = function(key) sprintf("s3://%s/%s", bucket, key))
}

# Runs Python lines with this process's AWS settings; returns what they print.
run_python <- function(s3, lines, args = character()) {
  script <- tempfile(fileext = ".py")
  on.exit(unlink(script))
  writeLines(lines, script)
  out <- suppressWarnings(system2(s3$python, c(shQuote(script), shQuote(args)), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop("Python failed:\n", paste(out, collapse = "\n"))
  out
}

upload <- function(s3, file, key) {
  run_python(s3, c(
    "import os, sys, boto3",
    "boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL']).upload_file(sys.argv[1], sys.argv[2], sys.argv[3])"
  ), c(file, s3$bucket, key))
}

test_that("a store on S3 is shared: another machine (cache) and Python see its keys", {
  s3 <- local_s3()
  url <- s3$url("team/cache")
  st <- kpk_store(url)
  expect_identical(st$path, url)
  fit <- lm(mpg ~ wt, mtcars)
  big <- rnorm(2e6)
  st$set("fit", fit)
  st$set("big", big, namespace = "runs")
  st$mset(c("a", "b"), list(1:3, letters))
  expect_equal(coef(st$get("fit")), coef(fit))
  expect_identical(st$exists(c("fit", "nope")), c(TRUE, FALSE))
  expect_identical(st$list(), c("a", "b", "fit"))
  expect_identical(st$list_namespaces(), c("objects", "runs"))
  st$close()

  # Another machine: a fresh cache folder, so every value comes from the server.
  withr::local_envvar(XDG_CACHE_HOME = tempfile("other-machine"))
  other <- kpk_store(url)
  expect_identical(other$get("big", namespace = "runs"), big)
  expect_equal(coef(other$get("fit")), coef(fit))
  expect_identical(other$del(c("a", "zzz")), c(TRUE, FALSE))
  expect_error(other$get("a"), "not found in the kompakt store s3://kompakt-r/team/cache", class = "KeyError")

  # Python's kompakt.Store on the same URL lists R's keys.
  keys <- run_python(s3, c(
    "import sys, kompakt",
    "s = kompakt.Store(sys.argv[1])",
    "print(' '.join(s.list('objects')), ' '.join(s.list('runs')))"
  ), url)
  expect_identical(tail(keys, 1), "b fit big")

  expect_identical(other$clear(NULL), 3)
  expect_identical(other$list_namespaces(), character())
  # The values are younger than the grace period: gc keeps them (another machine might be
  # committing one), and the store stays whole.
  expect_identical(other$gc()[["objects"]], 0)
  other$close()
})

test_that("a store on S3 takes the options of stores on object storage; a folder refuses them", {
  s3 <- local_s3()
  url <- s3$url("options")
  cache <- tempfile("cache-")
  st <- kpk_store(url, cache_dir = cache, cache_limit = Inf, multipart_threshold = 5 * 2^20)
  st$set("k", rnorm(1e5))
  st$set("k", rnorm(1e5))
  expect_true(dir.exists(cache))
  # Within the default grace the old value stays; with none, gc takes it at once.
  expect_identical(st$gc()[["objects"]], 0)
  st$close()
  eager <- kpk_store(url, cache_dir = cache, grace = 0)
  expect_identical(eager$gc()[["objects"]], 1)
  eager$close()
  # The library's checks and messages, as from Python and the command line.
  expect_error(kpk_store(url, grace = -1), 'invalid grace "-1"')
  expect_error(kpk_store(tempfile(), grace = 60), "options of stores on object storage")
  expect_error(driver_kompakt(tempfile(), cache_dir = cache), "cache folder")
})

test_that("storr's driver specification passes on a store on S3", {
  need_storr()
  s3 <- local_s3()
  create <- function(dr = NULL, ...) {
    driver_kompakt(if (is.null(dr)) s3$url(basename(tempfile("storr"))) else dr$path, ...)
  }
  storr::test_driver(create)
  st <- storr_kompakt(s3$url("drake"))
  st$set("fit", lm(mpg ~ wt, mtcars))
  expect_identical(st$list(), "fit")
  st$destroy()
  expect_identical(storr_kompakt(s3$url("drake"))$list(), character())
})

test_that("files and tables are read from URLs by range; writes to URLs are refused", {
  s3 <- local_s3()
  dir <- withr::local_tempdir()
  obj <- list(x = rnorm(1e5), y = letters)
  kpk_save(obj, file.path(dir, "obj.kpk"))
  upload(s3, file.path(dir, "obj.kpk"), "data/obj.kpk")
  expect_identical(kpk_read(s3$url("data/obj.kpk")), obj)

  n <- 200000L
  df <- data.frame(id = seq_len(n), value = sin(seq_len(n)), group = rep(c("a", "b", "c", "d"), length.out = n),
                   stringsAsFactors = FALSE)
  write_kpk_table(df, file.path(dir, "t.kpk"))
  upload(s3, file.path(dir, "t.kpk"), "data/t.kpk")
  url <- s3$url("data/t.kpk")
  expect_equal(read_kpk_table(url), df)
  part <- read_kpk_table(url, columns = c("group", "id"), from = 150001, to = 150010)
  expect_equal(part, df[150001:150010, c("group", "id")], ignore_attr = "row.names")
  info <- kpk_table_info(url)
  expect_identical(info$rows, as.double(n))
  expect_identical(info$path, url)
  t <- kpk_table(url)
  expect_equal(t[c(1L, n), "value"]$value, df$value[c(1L, n)])

  # A missing object names its URL; other schemes are refused; kompakt writes local files only.
  expect_error(kpk_read(s3$url("data/missing.kpk")), "s3://kompakt-r/data/missing.kpk")
  expect_error(read_kpk_table(s3$url("data/missing.kpk")), "s3://kompakt-r/data/missing.kpk")
  expect_error(kpk_read("gs://bucket/obj.kpk"), "gs://bucket/obj.kpk.*s3://")
  expect_error(kpk_store("gs://bucket/store"), "not supported")
  # A missing bucket: an error that names the URL (once).
  err <- tryCatch(kpk_store("s3://no-such-bucket/st"), error = conditionMessage)
  expect_match(err, "s3://no-such-bucket/st", fixed = TRUE)
  expect_false(grepl("s3://no-such-bucket/st.*s3://no-such-bucket/st", err))
  expect_error(kpk_save(obj, s3$url("data/new.kpk")), "writes only files on this machine")
  expect_error(write_kpk_table(df, s3$url("data/new.kpk")), "writes only files on this machine")
  expect_false(file.exists("s3:"))
})
