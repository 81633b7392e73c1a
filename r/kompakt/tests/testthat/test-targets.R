# targets: the format's functions, and a real pipeline (tar_make) saving with kompakt.

test_that("the targets format's functions are self-contained and round trip", {
  fmt <- kompakt:::.tar_format_functions(codec = "zstd", level = 9, threads = 1)
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
  # Options are checked where they are given.
  expect_error(kompakt:::.tar_format_functions(codec = "nope", level = NULL, threads = 0), "codec")
  expect_error(kompakt:::.tar_format_functions(codec = NULL, level = NULL, threads = -1), "threads")
})

# A pipeline with static branches (targets made in a loop) and dynamic ones (pattern = map()),
# every value saved by kompakt; `three` is the factor of the static branch scaled_three.
write_pipeline <- function(script, three) {
  writeLines(c(
    "library(targets)",
    "tar_option_set(format = kompakt::tar_format_kompakt(codec = \"lz4\", threads = 1))",
    sprintf("factors <- c(two = 2, three = %d)", three),
    "scaled <- lapply(names(factors), function(n) {",
    "  tar_target_raw(paste0(\"scaled_\", n), substitute(data$x * f, list(f = factors[[n]])))",
    "})",
    "list(",
    "  tar_target(data, data.frame(x = 1:6, g = rep(c(\"a\", \"b\", \"c\"), 2))),",
    "  tar_target(groups, unique(data$g)),",
    "  tar_target(by_group, sum(data$x[data$g == groups]), pattern = map(groups)),",
    "  scaled,",
    "  tar_target(total, sum(scaled_two) + sum(scaled_three)),",
    "  tar_target(summary, list(by_group = by_group, total = total))",
    ")"), script)
}

test_that("a targets pipeline saves with tar_format_kompakt() and reruns only what changed", {
  need_targets()
  dir <- withr::local_tempdir("targets-")
  withr::local_dir(dir)
  # targets asks for the time zone, which without TZ may run timedatectl (and warn where
  # there is no systemd).
  withr::local_envvar(TZ = "UTC")
  # tar_make() in this process attaches targets (_targets.R calls library(targets)).
  if (!"package:targets" %in% search()) withr::defer(detach("package:targets", character.only = TRUE))
  script <- file.path(dir, "_targets.R")
  store <- file.path(dir, "_targets")
  make <- function() {
    targets::tar_make(callr_function = NULL, reporter = "silent", script = script, store = store)
  }
  ran <- function() {
    p <- targets::tar_progress(store = store)
    sort(p$name[p$progress == "completed"])
  }
  write_pipeline(script, three = 3)
  make()
  expect_identical(targets::tar_read(data, store = store)$x, 1:6)
  # A pattern's value: its branches' values, named by branch.
  branches <- targets::tar_meta(by_group, children, store = store)$children[[1]]
  expect_length(branches, 3L)
  expect_identical(targets::tar_read(by_group, store = store), structure(c(5L, 7L, 9L), names = branches))
  expect_identical(unname(targets::tar_read(by_group, branches = 2, store = store)), 7L)
  expect_identical(targets::tar_read(total, store = store), 105)
  expect_true(all(c("data", "groups", "scaled_two", "scaled_three", "total", "summary", branches) %in% ran()))
  # The stored values are kompakt files that kompakt reads on its own.
  expect_identical(kpk_read(file.path(store, "objects", "data")), targets::tar_read(data, store = store))
  expect_identical(kpk_read(file.path(store, "objects", branches[[3]])), 9L)
  expect_match(targets::tar_meta(total, format, store = store)$format, "^format_custom")

  # Nothing changed: nothing runs.
  make()
  expect_identical(ran(), character())
  # The static branch scaled_three changes: it and what depends on it run, nothing else.
  write_pipeline(script, three = 4)
  make()
  expect_identical(ran(), sort(c("scaled_three", "total", "summary")))
  expect_identical(targets::tar_read(total, store = store), 126)
  expect_identical(targets::tar_read(summary, store = store),
                   list(by_group = structure(c(5L, 7L, 9L), names = branches), total = 126))
})

test_that("tar_format_kompakt() needs targets, and checks its options", {
  if (requireNamespace("targets", quietly = TRUE)) {
    expect_match(tar_format_kompakt(codec = "zstd", level = 3), "^format_custom")
    expect_error(tar_format_kompakt(level = "high"), "level")
  } else {
    expect_error(tar_format_kompakt(), "needs the targets package")
  }
})
