#' A kompakt object store
#'
#' `kpk_store(path)` opens (creating it when missing) a content-addressed store in a folder:
#' each value is saved once per content, as `kpk_save()` saves it, and keys (any strings, in
#' namespaces) point at values. It is the same folder format as Python's `kompakt.Store`, so one
#' store can be used from R and Python at once (each language refuses the other's values with a
#' message naming it), and `kompakt store ls/verify/gc` work on it. Many processes may use one
#' store; every set is atomic and the last writer of a key wins.
#'
#' The store may live on object storage: `kpk_store("s3://bucket/prefix")` is the same store as
#' Python's `kompakt.Store("s3://bucket/prefix")`, shared by every machine that reaches the bucket
#' (credentials, region and endpoint from the AWS environment variables, such as
#' `AWS_ENDPOINT_URL` for MinIO or Ceph). Values are built and kept in a local cache folder (under
#' `$XDG_CACHE_HOME/kompakt/remote`, else `~/.cache`; at most 10 GiB, least recently used first
#' out), so repeated gets do not go to the network.
#'
#' The store is an environment of functions:
#' \describe{
#'   \item{`$set(key, value, namespace)`}{saves `value` under `key`; returns its content hash, invisibly.}
#'   \item{`$get(key, namespace, trusted)`}{the value; a missing key is an error of class
#'     `KeyError`. `trusted` (default: the store's) as for [kpk_read()].}
#'   \item{`$exists(key, namespace)`, `$del(key, namespace)`}{logical, one per key (vectorised).}
#'   \item{`$mget(keys, namespace)`, `$mset(keys, values, namespace)`}{several keys.}
#'   \item{`$list(namespace)`, `$list_namespaces()`}{sorted keys; namespaces that hold keys.}
#'   \item{`$clear(namespace)`}{deletes every key of `namespace` (`NULL`: of all); returns how many.}
#'   \item{`$gc()`}{removes the values no key points at (on S3, those older than an hour, so a
#'     value another machine is committing stays); returns `c(objects, bytes)` removed.}
#'   \item{`$close()`}{closes the store (also done when it is garbage collected).}
#' }
#'
#' @param path The store's folder, or an `s3://bucket/prefix` URL.
#' @param codec,level The default codec, recorded when the store is created (see
#'   [kpk_save()]); an existing store opened with another is an error.
#' @param threads Threads for large values; 0 (the default) uses all cores.
#' @param namespace The namespace used when a call names none.
#' @param trusted Whether values are unserialized as they are (`TRUE`, the default, as
#'   Python's `kompakt.Store`) or checked first and refused when they hold code (`FALSE`; see
#'   [kpk_read()], "Trusted and untrusted reads"): pass `FALSE` for a store others write to.
#' @return A `kpk_store`.
#' @examples
#' st <- kpk_store(file.path(tempdir(), "cache"))
#' st$set("model", lm(mpg ~ wt, mtcars))
#' coef(st$get("model"))
#' st$exists(c("model", "other"))
#' st$list()
#' st$close()
#' @export
kpk_store <- function(path, codec = NULL, level = NULL, threads = 0L, namespace = "objects",
                      trusted = TRUE) {
  .check_trusted(trusted)
  path <- .store_location(path)
  ptr <- .Call(kpk_store_open_c, path, codec, level, threads)
  self <- new.env(parent = emptyenv())
  self$path <- path
  self$default_namespace <- namespace
  self$trusted <- trusted
  self$set <- function(key, value, namespace = self$default_namespace) {
    invisible(.Call(kpk_store_set_c, ptr, namespace, key, value))
  }
  self$get <- function(key, namespace = self$default_namespace, trusted = self$trusted) {
    found <- .Call(kpk_store_get_c, ptr, namespace, key, trusted)
    if (is.null(found)) {
      stop(structure(
        class = c("KeyError", "error", "condition"),
        list(message = sprintf("key '%s' ('%s') not found in the kompakt store %s", key, namespace, path),
             call = sys.call(-1), key = key, namespace = namespace)
      ))
    }
    found[[1]]
  }
  self$exists <- function(key, namespace = self$default_namespace) .Call(kpk_store_exists_c, ptr, namespace, key)
  self$del <- function(key, namespace = self$default_namespace) invisible(.Call(kpk_store_del_c, ptr, namespace, key))
  self$mget <- function(keys, namespace = self$default_namespace, trusted = self$trusted) {
    lapply(keys, self$get, namespace = namespace, trusted = trusted)
  }
  self$mset <- function(keys, values, namespace = self$default_namespace) {
    if (length(keys) != length(values)) stop("kompakt: mset needs as many values as keys")
    invisible(vapply(seq_along(keys), function(i) self$set(keys[[i]], values[[i]], namespace), ""))
  }
  self$list <- function(namespace = self$default_namespace) .Call(kpk_store_keys_c, ptr, namespace)
  self$list_namespaces <- function() .Call(kpk_store_namespaces_c, ptr)
  self$clear <- function(namespace = self$default_namespace) invisible(.Call(kpk_store_clear_c, ptr, namespace))
  self$gc <- function() .Call(kpk_store_gc_c, ptr)
  self$close <- function() invisible(.Call(kpk_store_close_c, ptr))
  class(self) <- "kpk_store"
  self
}

#' @export
print.kpk_store <- function(x, ...) {
  cat("<kpk_store> ", x$path, "\n", sep = "")
  invisible(x)
}

# A URL (s3://...) as it is; a path made absolute, so the store is the same folder wherever
# the working directory goes.
.store_location <- function(path) {
  if (!is.character(path) || length(path) != 1L || is.na(path)) stop("kompakt: path must be one string", call. = FALSE)
  if (.is_url(path)) path else normalizePath(path, mustWork = FALSE)
}

# TRUE or FALSE, checked where it is given (not at the first read).
.check_trusted <- function(trusted) {
  if (!is.logical(trusted) || length(trusted) != 1L || is.na(trusted)) {
    stop("kompakt: trusted must be TRUE or FALSE", call. = FALSE)
  }
}

.is_url <- function(x) grepl("^[A-Za-z][A-Za-z0-9+.-]*://", x)
