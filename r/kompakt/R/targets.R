#' A targets storage format that saves with kompakt
#'
#' `tar_format_kompakt()` gives the `format` argument of `targets::tar_target()` (or
#' `tar_option_set()`): targets saves each target's value with [kpk_save()] and reads it back
#' with [kpk_read()], on all cores, atomically. Its functions are self-contained, as
#' `targets::tar_format()` requires: the options are written into their code.
#'
#' In `_targets.R`:
#' \preformatted{
#' library(targets)
#' tar_option_set(format = kompakt::tar_format_kompakt(codec = "zstd", level = 3))
#' list(tar_target(data, read.csv("data.csv")), tar_target(fit, lm(y ~ x, data)))
#' }
#'
#' @param codec,level,threads As for [kpk_save()].
#' @return With targets installed, the format string of `targets::tar_format()`; without it,
#'   the list of its `read` and `write` functions (what the tests call).
#' @examples
#' fmt <- tar_format_kompakt(codec = "lz4")
#' f <- if (is.list(fmt)) fmt else NULL
#' if (!is.null(f)) {
#'   path <- tempfile()
#'   f$write(mtcars, path)
#'   identical(f$read(path), mtcars)
#' }
#' @export
tar_format_kompakt <- function(codec = NULL, level = NULL, threads = 0L) {
  read <- function(path) kompakt::kpk_read(path)
  write <- eval(bquote(function(object, path) {
    kompakt::kpk_save(object, path, codec = .(codec), level = .(level), threads = .(threads))
  }), baseenv())
  environment(read) <- baseenv()
  if (requireNamespace("targets", quietly = TRUE)) {
    return(targets::tar_format(read = read, write = write))
  }
  list(read = read, write = write)
}
