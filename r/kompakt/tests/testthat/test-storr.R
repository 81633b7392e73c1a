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
