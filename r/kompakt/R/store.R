# The object store: kpk_store(). Documented in man/kpk_store.Rd.

kpk_store <- function(path, codec = NULL, level = NULL, threads = 0L, namespace = "objects",
                      trusted = TRUE, cache_dir = NULL, cache_limit = NULL, grace = NULL,
                      multipart_threshold = NULL) {
  .check_trusted(trusted)
  path <- .store_location(path)
  ptr <- .Call(kpk_store_open_c, path, .store_options(codec, level, threads, cache_dir, cache_limit, grace,
                                                      multipart_threshold))
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

# The options of kpk_store_open_with; those of stores on object storage are refused for a folder
# by the library, with the message every front end gives.
.store_options <- function(codec, level, threads, cache_dir, cache_limit, grace, multipart_threshold) {
  list(codec = codec, level = level, threads = threads, cache_dir = cache_dir, cache_limit = cache_limit,
       grace = grace, multipart_threshold = multipart_threshold)
}

.is_url <- function(x) grepl("^[A-Za-z][A-Za-z0-9+.-]*://", x)
