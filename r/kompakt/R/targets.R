# The targets storage format: tar_format_kompakt(). Documented in man/tar_format_kompakt.Rd.

tar_format_kompakt <- function(codec = NULL, level = NULL, threads = 0L, sync = getOption("kompakt.sync")) {
  if (!requireNamespace("targets", quietly = TRUE)) {
    stop("kompakt: tar_format_kompakt() needs the targets package", call. = FALSE)
  }
  f <- .tar_format_functions(codec, level, threads, sync)
  targets::tar_format(read = f$read, write = f$write)
}

# The format's read and write functions. targets deparses them and evaluates them in another
# process: they use nothing but their arguments and kompakt's exported functions, and the
# options are written into their code.
.tar_format_functions <- function(codec, level, threads, sync = NULL) {
  # Checked here, where they are given, rather than at the first target saved (sync by a
  # save of NULL, as only a file has it).
  .Call(kpk_serialize_c, NULL, .write_options(codec, level, threads))
  if (!is.null(sync)) {
    probe <- tempfile("kompakt-sync-")
    on.exit(unlink(probe))
    .Call(kpk_save_c, NULL, probe, .write_options(NULL, NULL, 0L, sync))
  }
  read <- function(path) kompakt::kpk_read(path)
  write <- eval(bquote(function(object, path) {
    kompakt::kpk_save(object, path, codec = .(codec), level = .(level), threads = .(threads), sync = .(sync))
  }), baseenv())
  environment(read) <- baseenv()
  list(read = read, write = write)
}
