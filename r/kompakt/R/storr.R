# A storr driver on a kompakt store: driver_kompakt(), storr_kompakt(). Documented in
# man/driver_kompakt.Rd. The driver implements storr's driver interface (see storr's
# driver_rds), including the optional check_objects() and check_keys() behind storr's $check().

driver_kompakt <- function(path, codec = NULL, level = NULL, threads = 0L, hash_algorithm = NULL,
                           trusted = TRUE, cache_dir = NULL, cache_limit = NULL, grace = NULL,
                           multipart_threshold = NULL) {
  .check_trusted(trusted)
  path <- .store_location(path)
  ptr <- .Call(kpk_store_open_c, path, .store_options(codec, level, threads, cache_dir, cache_limit, grace,
                                                      multipart_threshold))
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
    # storr's $get asks this of one key before each get: one .Call, not the recycling below
    # (12-17 us of the 60 a tiny key's $get took with it).
    if (length(key) == 1L && length(namespace) == 1L) {
      return(.Call(kpk_store_exists_c, ptr, as.character(namespace), as.character(key)))
    }
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
  # storr's $check() and $repair(). Objects: each value opened and its description read, and
  # with `full` every block decoded (each checksum verified); a value that is missing, damaged
  # or not an R object is corrupt (`why` says what is wrong with it). Keys: a key whose hash is
  # unreadable or not a hash is corrupt, one whose object is missing or corrupt is dangling
  # (looked up in the store's index, so with `full = FALSE` too).
  self$check_objects <- function(full, hash_length, progress) {
    hashes <- self$list_hashes()
    problems <- .Call(kpk_store_check_c, ptr, objects, hashes, isTRUE(full))
    bad <- !is.na(problems)
    list(corrupt = hashes[bad], why = structure(problems[bad], names = hashes[bad]))
  }
  self$check_keys <- function(full, hash_length, progress, invalid_hashes) {
    pattern <- sprintf("^[[:xdigit:]]{%d}$", hash_length)
    sound <- setdiff(self$list_hashes(), invalid_hashes)
    namespaces <- self$list_namespaces()
    found <- lapply(namespaces, function(ns) {
      keys <- self$list_keys(ns)
      hashes <- vapply(keys, function(k) {
        tryCatch(get_hash(k, ns) %||% NA_character_, error = function(e) NA_character_)
      }, "", USE.NAMES = FALSE)
      corrupt <- is.na(hashes) | !grepl(pattern, hashes)
      list(corrupt = keys[corrupt], dangling = keys[!corrupt & !(hashes %in% sound)])
    })
    collect <- function(what) {
      keys <- lapply(found, `[[`, what)
      cbind(namespace = rep(namespaces, lengths(keys)), key = unlist(keys, use.names = FALSE))
    }
    list(corrupt = collect("corrupt"), dangling = collect("dangling"))
  }
  class(self) <- "driver_kompakt"
  self
}

storr_kompakt <- function(path, codec = NULL, level = NULL, threads = 0L, hash_algorithm = NULL,
                          default_namespace = "objects", trusted = TRUE, ...) {
  if (!requireNamespace("storr", quietly = TRUE)) stop("storr_kompakt needs the storr package")
  storr::storr(driver_kompakt(path, codec, level, threads, hash_algorithm, trusted, ...), default_namespace)
}
