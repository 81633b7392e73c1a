# Saving and reading R objects: kpk_save(), kpk_read(), kpk_serialize(), kpk_unserialize().
# Documented in man/kpk_save.Rd (the Rd files are the documentation's only source). The C glue
# is src/kompakt.c; options cross .Call as named lists.

kpk_save <- function(x, file, codec = NULL, level = NULL, threads = 0L, sync = getOption("kompakt.sync")) {
  .Call(kpk_save_c, x, file, .write_options(codec, level, threads, sync))
  invisible(file)
}

kpk_read <- function(file, threads = 0L, trusted = TRUE) {
  .Call(kpk_read_c, file, list(threads = threads, trusted = trusted))
}

kpk_serialize <- function(x, codec = NULL, level = NULL, threads = 0L) {
  .Call(kpk_serialize_c, x, .write_options(codec, level, threads))
}

kpk_unserialize <- function(raw, threads = 0L, trusted = TRUE) {
  .Call(kpk_unserialize_c, raw, list(threads = threads, trusted = trusted))
}

# The options of every writer (files, memory, stores), checked in C; `sync` matters to files.
.write_options <- function(codec, level, threads, sync = NULL) {
  list(codec = codec, level = level, threads = threads, sync = sync)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
