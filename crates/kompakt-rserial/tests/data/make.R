# Writes the golden streams of the checker's tests (R 4.2.2 made the files in this folder):
#   cd crates/kompakt-rserial/tests/data && Rscript make.R
# Each value is written in the three encodings: NAME.xdr, NAME.native, NAME.ascii.
options(keep.source = FALSE)
write_all <- function(name, x) {
  writeBin(serialize(x, NULL), paste0(name, ".xdr"))
  writeBin(serialize(x, NULL, xdr = FALSE), paste0(name, ".native"))
  writeBin(serialize(x, NULL, ascii = TRUE), paste0(name, ".ascii"))
}
# Plain data: must pass the untrusted policy.
write_all("intseq", 1:10)
write_all("frame", data.frame(
  i = c(1L, NA, 3L), x = c(1.5, NA, -Inf), s = c("a", NA, "\u00e9t\u00e9\n"),
  f = factor(c("u", "v", "u")), d = as.Date("2024-01-01") + 0:2,
  t = as.POSIXct(c(0, 1, NA), origin = "1970-01-01", tz = "UTC"),
  stringsAsFactors = FALSE
))
write_all("misc", list(
  m = matrix(1:6, 2, dimnames = list(c("a", "b"), NULL)), z = complex(real = 1, imaginary = -1),
  r = as.raw(0:255), l = c(TRUE, NA), seqs = list(5:1, 1:3 + 0.5, seq(2, 10)),
  strings = as.character(1:5), sorted = sort(c(3, 1, 2)), nested = list(list(list(NULL))),
  sym = as.name("x"), call = quote(f(x, y = 2)[, 1]), formula = y ~ x + log(z),
  long = seq_len(3000) * 2L, e = expression(a + b)
))
# Code and what loads code: must be refused.
write_all("closure", function(x) x + 1)
env <- new.env(parent = emptyenv())
delayedAssign("p", stop("forced"), assign.env = env)
write_all("promise_env", env)
active <- new.env(parent = emptyenv())
makeActiveBinding("a", function() 1, active)
write_all("active_binding", active)
write_all("namespace", asNamespace("stats"))
write_all("builtin", list(sum))
if (requireNamespace("data.table", quietly = TRUE)) write_all("data_table", data.table::data.table(a = 1:2))
write_all("plain_env", list2env(list(a = 1, b = "x"), parent = globalenv()))
