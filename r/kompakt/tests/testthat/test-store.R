test_that("a store sets, gets, lists and deletes values in namespaces", {
  path <- tempfile("store")
  on.exit(unlink(path, recursive = TRUE))
  st <- kpk_store(path)
  h1 <- st$set("a", list(x = 1:3, y = "text"))
  h2 <- st$set("b", runif(3e5))
  expect_match(h1, "^[0-9a-f]{32}$")
  expect_identical(st$set("same", list(x = 1:3, y = "text"), namespace = "runs"), h1)
  expect_identical(st$get("a"), list(x = 1:3, y = "text"))
  expect_length(st$get("b"), 3e5)
  expect_identical(st$list(), c("a", "b"))
  expect_identical(st$list("runs"), "same")
  expect_identical(st$list_namespaces(), c("objects", "runs"))
  expect_identical(st$exists(c("a", "nope")), c(TRUE, FALSE))
  err <- tryCatch(st$get("nope"), error = function(e) e)
  expect_s3_class(err, "KeyError")
  expect_match(conditionMessage(err), "nope")
  expect_identical(st$del(c("a", "a")), c(TRUE, FALSE))
  expect_false(st$exists("a"))
  st$mset(c("m1", "m2"), list(1, "two"))
  expect_identical(st$mget(c("m1", "m2")), list(1, "two"))
  st$set("m1", "replaced")
  expect_identical(st$get("m1"), "replaced")
  st$close()
  expect_error(st$get("m1"), "closed")
  # Reopened, the values are there; another codec than the store's is refused.
  again <- kpk_store(path)
  expect_identical(again$get("m2"), "two")
  expect_error(kpk_store(path, codec = "lz4"), "codec")
})

test_that("a store folder is shared with Python and the command line", {
  path <- tempfile("shared")
  on.exit(unlink(path, recursive = TRUE))
  st <- kpk_store(path)
  st$set("from_r", data.frame(a = 1:3))
  st$set("kept", 1:3)
  kompakt_cli <- Sys.getenv("KOMPAKT_BIN")
  if (nzchar(kompakt_cli)) {
    expect_match(system2(kompakt_cli, c("store", "ls", path), stdout = TRUE), "from_r", all = FALSE)
    expect_identical(system2(kompakt_cli, c("store", "verify", path), stdout = FALSE), 0L)
    st$del("from_r")
    expect_identical(system2(kompakt_cli, c("store", "gc", path), stdout = FALSE), 0L)
    expect_identical(st$get("kept"), 1:3)
  }
  python <- Sys.getenv("KOMPAKT_PYTHON_BIN")
  if (nzchar(python)) {
    script <- tempfile(fileext = ".py")
    writeLines(c(
      "import sys, kompakt",
      "s = kompakt.Store(sys.argv[1])",
      "s.set('from_python', {'x': [1, 2]})",
      "try:",
      "    s.get('kept')",
      "except ValueError as e:",
      "    print(e)"), script)
    out <- system2(python, c(script, shQuote(path)), stdout = TRUE)
    expect_match(out, "R object", all = FALSE)
    expect_true(st$exists("from_python"))
    expect_error(st$get("from_python"), "Python object")
  }
})
