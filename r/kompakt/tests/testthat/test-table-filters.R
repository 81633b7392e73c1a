# Filtered table reads (read_kpk_table(filters =), t[filters =]) against base R's subsetting.

filter_frame <- function(n = 20000L) {
  set.seed(42)
  city <- sample(c("Oslo", "Bergen", "Troms\u00f8", NA), n, TRUE)
  price <- round(runif(n) * 100, 2)
  price[seq(7L, n, by = 97L)] <- NA
  data.frame(
    id = seq_len(n),
    price = price,
    city = city,
    region = factor(sample(c("north", "south", "west"), n, TRUE), levels = c("north", "south", "west")),
    day = as.Date("2020-01-01") + seq_len(n) %/% 50L,
    flag = rep(c(TRUE, FALSE, NA, TRUE), length.out = n),
    stringsAsFactors = FALSE
  )
}

filter_table <- function(df = filter_frame()) {
  path <- tempfile(fileext = ".kpk")
  write_kpk_table(df, path, sorted_by = "id", rows_per_group = 1000)
  path
}

# Base R's rows where `keep` is TRUE (NA: dropped), numbered anew, as a filtered read numbers them.
base_rows <- function(df, keep, columns = names(df)) {
  out <- df[which(keep), columns, drop = FALSE]
  rownames(out) <- NULL
  out
}

test_that("filters on the sort key, numbers, strings, factors, dates and logicals equal base R", {
  df <- filter_frame()
  path <- filter_table(df)
  on.exit(unlink(path))
  check <- function(filters, keep, columns = NULL, ...) {
    got <- read_kpk_table(path, columns = columns, filters = filters, ...)
    expect_identical(got, base_rows(df, keep, if (is.null(columns)) names(df) else columns))
  }
  # The sort key: a binary search, then only the row groups that hold the range.
  check(list(list("id", ">=", 5001), list("id", "<", 5101)), df$id >= 5001 & df$id < 5101)
  check(list(list("id", "==", 777L)), df$id == 777L, columns = c("city", "price"))
  # Values an integer column cannot hold mean what they say.
  check(list(list("id", ">", 100.5), list("id", "<=", 199.5)), df$id > 100.5 & df$id <= 199.5)
  check(list(list("id", "<", 1e12)), df$id < 1e12)
  check(list(list("id", "==", 2.5)), df$id == 2.5)
  check(list(list("id", "in", c(3, 4.5, 19999, 1e15))), df$id %in% c(3, 19999))
  # Doubles with NA: NA passes no comparison.
  check(list(list("price", ">=", 50), list("city", "==", "Oslo")), df$price >= 50 & df$city == "Oslo")
  # Strings: in, not in (NA passes not in, as !(x %in% values) says), UTF-8.
  check(list(list("city", "in", c("Oslo", "Troms\u00f8"))), df$city %in% c("Oslo", "Troms\u00f8"))
  check(list(list("city", "not in", c("Oslo", "Bergen"))), !(df$city %in% c("Oslo", "Bergen")))
  check(list(list("city", "!=", "Oslo")), df$city != "Oslo")
  # A factor column by its levels, given as text or as a factor; its levels are kept.
  check(list(list("region", "in", c("north", "west"))), df$region %in% c("north", "west"))
  check(list(list("region", "==", factor("south"))), df$region == "south", columns = "region")
  # Dates, logicals.
  check(list(list("day", "<", as.Date("2020-02-01"))), df$day < as.Date("2020-02-01"))
  check(list(list("day", ">=", "2020-12-01")), df$day >= as.Date("2020-12-01"))
  check(list(list("flag", "==", TRUE), list("id", "<=", 100)), df$flag & df$id <= 100)
  # Within from..to; named filters; one filter alone; no row passing.
  check(list(list(column = "city", op = "==", value = "Bergen")), seq_len(nrow(df)) %in% 3000:12000 & df$city == "Bergen",
        from = 3000, to = 12000)
  check(list("id", "<", 4), df$id < 4)
  check(list(list("id", ">", 5e4)), df$id > 5e4)
  expect_identical(levels(read_kpk_table(path, filters = list(list("id", ">", 5e4)))$region), levels(df$region))
})

test_that("the lazy table reads the rows passing filters with t[filters = ]", {
  df <- filter_frame()
  path <- filter_table(df)
  on.exit(unlink(path))
  t <- kpk_table(path)
  f <- list(list("price", "<", 10), list("region", "==", "north"))
  keep <- df$price < 10 & df$region == "north"
  expect_identical(t[filters = f], base_rows(df, keep))
  expect_identical(t[, c("id", "city"), filters = f], base_rows(df, keep, c("id", "city")))
  expect_identical(t["price", filters = f], base_rows(df, keep, "price"))
  expect_identical(t[, "id", drop = TRUE, filters = f], df$id[which(keep)])
  expect_error(t[1:5, , filters = f], "filters or by i, not both")
})

test_that("a bad op, an unknown column or a value of another type is an error naming it", {
  path <- filter_table(filter_frame(100L))
  on.exit(unlink(path))
  expect_error(read_kpk_table(path, filters = list(list("id", "=>", 1))),
               "invalid filter op \"=>\": one of ==, =, !=, <, <=, >, >=, in, not in", fixed = TRUE)
  expect_error(read_kpk_table(path, filters = list(list("nope", "==", 1))), "invalid filter column \"nope\"",
               fixed = TRUE)
  expect_error(read_kpk_table(path, filters = list(list("city", ">=", 10))), "invalid filter value type",
               fixed = TRUE)
  expect_error(read_kpk_table(path, filters = list(list("id", "==", c(1, 2)))), "invalid filter values",
               fixed = TRUE)
  expect_error(read_kpk_table(path, filters = list(list("id", 1))), "must be list(column, op, value)", fixed = TRUE)
  expect_error(read_kpk_table(path, filters = "id > 1"), "filters must be a list", fixed = TRUE)
  expect_error(read_kpk_table(path, filters = list(list("day", "<", "soon"))), "is not a date", fixed = TRUE)
})

test_that("POSIXct, difftime and Date columns take values of their class", {
  n <- 5000L
  df <- data.frame(
    when = as.POSIXct("2026-01-01", tz = "Europe/Paris") + seq_len(n) * 3600,
    rough = as.POSIXct("2026-01-01", tz = "UTC") + seq_len(n) * 3600.0000001, # stored as doubles
    wait = as.difftime(seq_len(n), units = "mins"),
    half = as.Date("2020-01-01") + seq_len(n) / 2 # not whole days: stored as doubles
  )
  path <- tempfile(fileext = ".kpk")
  on.exit(unlink(path))
  write_kpk_table(df, path, sorted_by = "when", rows_per_group = 500)
  check <- function(filters, keep) expect_identical(read_kpk_table(path, filters = filters), base_rows(df, keep))
  march <- as.POSIXct("2026-03-01", tz = "UTC")
  check(list(list("when", ">=", march), list("when", "<", as.Date("2026-03-02"))),
        as.numeric(df$when) >= as.numeric(march) & as.numeric(df$when) < as.numeric(as.POSIXct(as.Date("2026-03-02"))))
  check(list(list("rough", "<", march)), df$rough < march)
  check(list(list("wait", ">", as.difftime(2, units = "hours"))), df$wait > as.difftime(2, units = "hours"))
  check(list(list("wait", "<=", 30)), as.numeric(df$wait) <= 30)
  check(list(list("half", ">", as.Date("2026-01-01"))), df$half > as.Date("2026-01-01"))
  expect_error(read_kpk_table(path, filters = list(list("when", ">", 3))), "invalid filter value type", fixed = TRUE)
})
