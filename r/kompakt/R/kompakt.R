#' Save and read any R object with kompakt
#'
#' `kpk_save()` streams `x` through R's own serialization (binary, version 3) into a kompakt
#' file: compressed on all cores while R serializes, checksummed, and written atomically (a
#' temporary file, fsync, rename: a failure or an interrupt leaves what `file` held before).
#' `kpk_read()` reads it back; `kpk_serialize()` and `kpk_unserialize()` do the same in memory.
#' The files are ordinary kompakt files: `kompakt inspect` and `kompakt verify` read them.
#'
#' @section Trusted and untrusted reads:
#' Reading runs R's unserializer, and what it rebuilds may hold code that runs when the value
#' is used: a promise is forced when the result is first touched, a function runs when called,
#' a package namespace or ALTREP class in the file makes R load that package. `trusted = TRUE`
#' (the default, as in Python's `kompakt.load()`) hands the file to R as it is: read only files
#' you or someone you trust wrote. `trusted = FALSE` first checks the whole serialization
#' without R (kompakt's checker of R's format, in Rust; the stream is decoded a piece at a
#' time and never held whole, then decoded again for R), and refuses it with an error naming
#' what it found before R unserializes any of it: promises, functions (closures, byte code,
#' built-ins), `...` lists, environments (so R6 and reference class objects, and formulas
#' made inside functions, whose environment comes with them), active bindings, package
#' namespaces and environments, external pointers (a `data.table` carries one; convert it
#' with `as.data.frame()` before saving for untrusted readers), ALTREP objects of classes
#' other than base R's own, and streams R never writes (a damaged or forged one). Plain data
#' passes: vectors, lists, data frames, factors, dates and times, matrices, attributes, S4
#' objects, symbols, calls and formulas made at top level (R builds a call without evaluating
#' it; it runs only if your code evaluates it). Touching an S4 object may load the installed
#' package that defines its class, as any S4 dispatch does; the file cannot bring code of
#' its own.
#'
#' `codec` and `level` mean what they mean everywhere in kompakt: neither gives the default
#' (zstd level 1); a level alone is a unified level 0-100 (0 raw, 1-10 LZ4, 11-20 LZ4-HC,
#' 21-100 ZSTD); a codec alone is a spec such as `"lz4"`, `"zstd:3"`, `"auto"` or `"none"`; a
#' bare codec name and a level is that codec's own level.
#'
#' @param x Any R object.
#' @param file A path. `kpk_read()` also reads a URL: an object on S3 (`s3://bucket/key`,
#'   with credentials and endpoint from the AWS environment variables such as
#'   `AWS_ENDPOINT_URL`) or behind an `https://` URL.
#' @param codec `NULL` or a codec spec (see Details).
#' @param level `NULL` or a level (see Details).
#' @param threads Threads to compress or decompress with; 0 (the default) uses all cores.
#' @param raw A raw vector made by `kpk_serialize()`.
#' @param trusted `TRUE` (the default) to unserialize the file as it is; `FALSE` to check it
#'   first and refuse anything that could run or load code (see "Trusted and untrusted reads").
#' @return `kpk_save()` returns `file`, invisibly; `kpk_read()` and `kpk_unserialize()` the
#'   object; `kpk_serialize()` a raw vector.
#' @examples
#' path <- tempfile(fileext = ".kpk")
#' kpk_save(list(a = 1:10, b = letters), path)
#' str(kpk_read(path))
#' raw <- kpk_serialize(mtcars, codec = "lz4")
#' identical(kpk_unserialize(raw), mtcars)
#' @export
kpk_save <- function(x, file, codec = NULL, level = NULL, threads = 0L) {
  .Call(kpk_save_c, x, file, codec, level, threads)
  invisible(file)
}

#' @rdname kpk_save
#' @export
kpk_read <- function(file, threads = 0L, trusted = TRUE) {
  .Call(kpk_read_c, file, threads, trusted)
}

#' @rdname kpk_save
#' @export
kpk_serialize <- function(x, codec = NULL, level = NULL, threads = 0L) {
  .Call(kpk_serialize_c, x, codec, level, threads)
}

#' @rdname kpk_save
#' @export
kpk_unserialize <- function(raw, threads = 0L, trusted = TRUE) {
  .Call(kpk_unserialize_c, raw, threads, trusted)
}
