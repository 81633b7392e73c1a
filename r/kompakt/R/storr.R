#' A storr driver on a kompakt store
#'
#' `driver_kompakt(path)` is a driver for the storr package (`storr::storr(driver_kompakt(path))`,
#' or `storr_kompakt(path)`): a drop-in for `driver_rds()` that drake and storr users can switch
#' to. storr serializes and hashes each value before a driver sees it; this driver takes those
#' bytes as they are (storr's `accept = "raw"`), so R serializes once, and compresses them on
#' all cores into a [kpk_store()] folder, read back by streaming them into R's unserializer.
#' Keys point at hashes in the store's namespaces; objects live in the reserved namespace
#' `"storr:objects"`, and the hash algorithm in `"storr:config"`.
#'
#' @param path The store's folder (created when missing), or an `s3://bucket/prefix` URL: a storr
#'   shared by every machine that reaches the bucket, as [kpk_store()] describes. Its `destroy()`
#'   deletes every key and collects the values older than an hour; younger ones go at a later
#'   `gc` (another machine may be committing them).
#' @param codec,level,threads As for [kpk_store()].
#' @param hash_algorithm storr's hash algorithm, recorded when the store is created (default
#'   `"xxhash64"`, as drake's caches; `"md5"` gives `driver_rds()`'s hashes); opening the store
#'   with another is an error.
#' @param default_namespace storr's default namespace.
#' @param trusted `TRUE` (the default) unserializes objects as they are; `FALSE` checks each
#'   one first and refuses it (an error) when it holds code, as [kpk_read()] describes: for a
#'   store that others can write to.
#' @return `driver_kompakt()`: a storr driver; `storr_kompakt()`: a storr.
#' @examples
#' if (requireNamespace("storr", quietly = TRUE)) {
#'   st <- storr_kompakt(file.path(tempdir(), "drake-cache"))
#'   st$set("fit", lm(mpg ~ wt, mtcars))
#'   coef(st$get("fit"))
#'   st$destroy()
#' }
#' @export
driver_kompakt <- function(path, codec = NULL, level = NULL, threads = 0L, hash_algorithm = NULL,
                           trusted = TRUE) {
  .check_trusted(trusted)
  path <- .store_location(path)
  ptr <- .Call(kpk_store_open_c, path, codec, level, threads)
  objects <- "storr:objects"
  config <- "storr:config"
  reserved <- c(objects, config)

  stored <- .Call(kpk_store_get_raw_c, ptr, config, "hash_algorithm")
  if (is.null(stored)) {
    # xxhash64 (as drake's caches use): storr hashes every value it sets, and md5 takes about as
    # long as compressing the value does.
    hash_algorithm <- hash_algorithm %||% "xxhash64"
    .Call(kpk_store_set_raw_c, ptr, config, "hash_algorithm", charToRaw(hash_algorithm), FALSE)
  } else if (!is.null(hash_algorithm) && hash_algorithm != rawToChar(stored)) {
    .Call(kpk_store_close_c, ptr)
    # storr's own condition (class ConfigError), with the store named.
    stop(structure(
      class = c("ConfigError", "error", "condition"),
      list(name = "hash_algorithm", prev = rawToChar(stored), requested = hash_algorithm, call = NULL,
           message = sprintf("Incompatible value for hash_algorithm (existing: %s, requested: %s) in the kompakt storr at %s",
                             rawToChar(stored), hash_algorithm, path))
    ))
  } else {
    hash_algorithm <- rawToChar(stored)
  }

  # storr's vectorised calls: keys and namespaces recycled against each other.
  pairs <- function(key, namespace) {
    n <- if (length(key) == 0L || length(namespace) == 0L) 0L else max(length(key), length(namespace))
    if (n > 0L && !(length(key) %in% c(1L, n) && length(namespace) %in% c(1L, n))) {
      stop("kompakt: key and namespace must have the same length, or length 1")
    }
    list(key = rep_len(as.character(key), n), namespace = rep_len(as.character(namespace), n), n = n)
  }
  check_namespace <- function(namespace) {
    if (any(namespace %in% reserved)) stop("kompakt: namespaces ", paste(reserved, collapse = " and "), " are reserved")
  }
  get_hash <- function(key, namespace) {
    raw <- .Call(kpk_store_get_raw_c, ptr, namespace, key)
    if (is.null(raw)) NULL else rawToChar(raw)
  }

  self <- new.env(parent = emptyenv())
  self$path <- path
  self$hash_algorithm <- hash_algorithm
  self$trusted <- trusted
  self$traits <- list(accept = "raw")
  self$type <- function() "kompakt"
  self$destroy <- function() {
    if (.is_url(path)) {
      .Call(kpk_store_clear_c, ptr, NULL)
      .Call(kpk_store_gc_c, ptr)
      .Call(kpk_store_close_c, ptr)
    } else {
      .Call(kpk_store_close_c, ptr)
      unlink(path, recursive = TRUE)
    }
    invisible(NULL)
  }
  self$get_hash <- function(key, namespace) {
    h <- get_hash(key, namespace)
    if (is.null(h)) stop(sprintf("kompakt: key '%s' ('%s') not found", key, namespace))
    h
  }
  self$set_hash <- function(key, namespace, hash) {
    check_namespace(namespace)
    .Call(kpk_store_set_raw_c, ptr, namespace, key, charToRaw(hash), FALSE)
    invisible(NULL)
  }
  self$get_object <- function(hash) {
    found <- .Call(kpk_store_get_c, ptr, objects, hash, trusted)
    if (is.null(found)) stop(sprintf("kompakt: object '%s' not found", hash))
    found[[1]]
  }
  self$set_object <- function(hash, value) {
    if (!is.raw(value)) value <- serialize(value, NULL, xdr = FALSE)
    .Call(kpk_store_set_raw_c, ptr, objects, hash, value, TRUE)
    invisible(NULL)
  }
  self$exists_hash <- function(key, namespace) {
    kn <- pairs(key, namespace)
    vapply(seq_len(kn$n), function(i) .Call(kpk_store_exists_c, ptr, kn$namespace[[i]], kn$key[[i]]), TRUE)
  }
  self$exists_object <- function(hash) .Call(kpk_store_exists_c, ptr, objects, as.character(hash))
  self$del_hash <- function(key, namespace) {
    kn <- pairs(key, namespace)
    vapply(seq_len(kn$n), function(i) .Call(kpk_store_del_c, ptr, kn$namespace[[i]], kn$key[[i]]), TRUE)
  }
  self$del_object <- function(hash) .Call(kpk_store_del_c, ptr, objects, as.character(hash))
  self$list_hashes <- function() .Call(kpk_store_keys_c, ptr, objects)
  self$list_keys <- function(namespace) .Call(kpk_store_keys_c, ptr, namespace)
  self$list_namespaces <- function() setdiff(.Call(kpk_store_namespaces_c, ptr), reserved)
  self$mget_hash <- function(key, namespace) {
    kn <- pairs(key, namespace)
    vapply(seq_len(kn$n), function(i) get_hash(kn$key[[i]], kn$namespace[[i]]) %||% NA_character_, "")
  }
  self$mset_hash <- function(key, namespace, hash) {
    kn <- pairs(key, namespace)
    hash <- rep_len(as.character(hash), kn$n)
    for (i in seq_len(kn$n)) self$set_hash(kn$key[[i]], kn$namespace[[i]], hash[[i]])
    invisible(NULL)
  }
  self$mget_object <- function(hash) {
    lapply(as.character(hash), function(h) {
      found <- .Call(kpk_store_get_c, ptr, objects, h, trusted)
      if (is.null(found)) NULL else found[[1]]
    })
  }
  self$mset_object <- function(hash, value) {
    for (i in seq_along(hash)) self$set_object(hash[[i]], value[[i]])
    invisible(NULL)
  }
  class(self) <- "driver_kompakt"
  self
}

#' @rdname driver_kompakt
#' @export
storr_kompakt <- function(path, codec = NULL, level = NULL, threads = 0L, hash_algorithm = NULL,
                          default_namespace = "objects", trusted = TRUE) {
  if (!requireNamespace("storr", quietly = TRUE)) stop("storr_kompakt needs the storr package")
  storr::storr(driver_kompakt(path, codec, level, threads, hash_algorithm, trusted), default_namespace)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
