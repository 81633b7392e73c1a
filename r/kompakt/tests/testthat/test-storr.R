test_that("the storr driver passes storr's own driver specification", {
  need_storr()
  create <- function(dr = NULL, ...) {
    driver_kompakt(if (is.null(dr)) tempfile("storr") else dr$path, ...)
  }
  # test_driver() reports through testthat; any failure is a failure here.
  res <- storr::test_driver(create)
  expect_true(TRUE)
})

test_that("a storr on kompakt is a drop-in for drake-style use", {
  need_storr()
  path <- tempfile("drake")
  st <- storr_kompakt(path)
  on.exit(st$destroy())
  fit <- lm(mpg ~ wt, mtcars)
  st$set("fit", fit)
  st$set("x", runif(1e5), namespace = "meta")
  expect_equal(coef(st$get("fit")), coef(fit))
  expect_length(st$get("x", namespace = "meta"), 1e5)
  expect_identical(sort(st$list_namespaces()), c("meta", "objects"))
  expect_identical(st$driver$type(), "kompakt")
  # A second storr on the same folder sees the same keys; another hash algorithm is refused.
  again <- storr_kompakt(path)
  expect_equal(coef(again$get("fit")), coef(fit))
  expect_error(storr_kompakt(path, hash_algorithm = "sha1"), "existing: xxhash64", class = "ConfigError")
  expect_identical(st$driver$hash_algorithm, "xxhash64")
})

test_that("storr's check() finds damaged and missing objects, and repair() removes them", {
  need_storr()
  path <- tempfile("storr-check")
  st <- storr_kompakt(path)
  on.exit(st$destroy())
  expect_true(st$check(quiet = TRUE)$healthy) # empty
  set.seed(1)
  # Large values live in files of their own (objects/), small ones in the store's index.
  st$set("big1", runif(2e5))
  st$set("big2", runif(2e5) + 1)
  st$set("small", letters, namespace = "other")
  res <- st$check(quiet = TRUE)
  expect_s3_class(res, "storr_check")
  expect_true(res$healthy)
  expect_length(res$objects$corrupt, 0L)
  expect_identical(nrow(res$keys$dangling), 0L)

  files <- sort(list.files(file.path(path, "objects"), pattern = "[.]kpk$", recursive = TRUE, full.names = TRUE))
  expect_length(files, 2L)
  # One file damaged in the middle of its data (a block checksum fails), the other gone.
  bytes <- readBin(files[[1]], "raw", file.size(files[[1]]))
  at <- length(bytes) %/% 2
  bytes[at:(at + 7)] <- as.raw(255L - as.integer(bytes[at:(at + 7)]))
  writeBin(bytes, files[[1]])
  unlink(files[[2]])
  # A key whose hash is not a hash.
  st$driver$set_hash("forged", "objects", "not a hash")

  expected <- sort(c(st$get_hash("big1"), st$get_hash("big2")))
  res <- st$check(quiet = TRUE)
  expect_false(res$healthy)
  expect_identical(sort(res$objects$corrupt), expected)
  expect_true(all(nzchar(res$objects$why)))
  expect_identical(sort(res$keys$dangling[, "key"]), c("big1", "big2"))
  expect_identical(unname(res$keys$corrupt[, "key"]), "forged")
  expect_identical(unname(res$keys$corrupt[, "namespace"]), "objects")
  # Without `full`, values are opened but not decoded: the missing one is found all the same.
  quick <- st$check(full = FALSE, quiet = TRUE)
  expect_false(quick$healthy)
  expect_true(all(quick$objects$corrupt %in% expected))
  expect_gte(length(quick$objects$corrupt), 1L)
  expect_message(st$check(), "found 2 corrupt objects")

  expect_true(st$repair(force = TRUE, quiet = TRUE))
  expect_true(st$check(quiet = TRUE)$healthy)
  expect_false(st$exists("big1"))
  expect_identical(st$get("small", namespace = "other"), letters)
})

test_that("a tiny key's $get asks one key at a time and keeps storr's errors", {
  need_storr()
  st <- storr_kompakt(tempfile("storr-tiny"))
  on.exit(st$destroy())
  st$set("a", 1)
  st$set("b", 2, namespace = "other")
  dr <- st$driver
  # The one-key answer is the vectorised one's.
  expect_identical(dr$exists_hash("a", "objects"), TRUE)
  expect_identical(dr$exists_hash("b", "objects"), FALSE)
  expect_identical(dr$exists_hash(c("a", "b"), c("objects", "other")), c(TRUE, TRUE))
  expect_identical(dr$exists_hash(character(), "objects"), logical())
  expect_error(st$get("missing"), class = "KeyError")
  # A key whose object is gone: storr's HashError.
  dr$del_object(st$get_hash("a"))
  expect_error(st$get("a", use_cache = FALSE), class = "HashError")
  expect_equal(st$get("b", namespace = "other"), 2)
})
