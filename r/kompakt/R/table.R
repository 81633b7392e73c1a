# Table files: data frames in kompakt's columnar format, the same files Python's
# kompakt.write_table writes and kompakt.read_table reads: write_kpk_table(), read_kpk_table(),
# append_kpk_table(), kpk_table_info(), kpk_table(), documented in man/write_kpk_table.Rd. The
# C glue (src/table_write.c, src/table_read.c) converts values; this file chooses each column's
# Arrow type and keeps R's attributes in the table's metadata (key "r"), so every column comes
# back as it was.

# Column kinds, as src/table_write.c numbers them.
.kind <- c(logical = 1L, integer = 2L, double = 3L, string = 4L, factor = 5L, date = 6L,
           timestamp = 7L, int64 = 8L, raw = 9L, list = 10L)

.column_kind <- function(x, name) {
  if (is.factor(x)) return(.kind[["factor"]])
  if (inherits(x, "integer64") && is.double(x)) return(.kind[["int64"]])
  if (inherits(x, "Date") && (is.double(x) || is.integer(x))) return(.kind[["date"]])
  if (inherits(x, "POSIXct") && is.double(x)) return(.kind[["timestamp"]])
  if (!is.null(dim(x))) {
    stop(sprintf("kompakt: column '%s' is a matrix or array, which a table column cannot hold", name),
         call. = FALSE)
  }
  if (is.list(x) && is.null(attributes(x)) && .plain_atomic_list(x)) return(.kind[["list"]])
  kind <- switch(typeof(x), logical = "logical", integer = "integer", double = "double",
                 character = "string", raw = "raw", NA_character_)
  if (is.na(kind)) {
    stop(sprintf(paste0("kompakt: column '%s' is of type %s (class %s), which a table cannot hold yet; ",
                        "columns may be logical, integer, double, character, factor, Date, POSIXct, ",
                        "difftime, integer64, raw, or lists of plain logical, integer, double or ",
                        "character vectors of one type"),
                 name, typeof(x), paste(class(x), collapse = "/")), call. = FALSE)
  }
  .kind[[kind]]
}

# A list column kompakt stores as an Arrow list: NULLs and plain vectors (no attributes, no
# names) of one of the types a list may hold, all the same.
.plain_atomic_list <- function(x) {
  types <- vapply(x, typeof, "")
  plain <- vapply(x, function(e) is.null(attributes(e)), TRUE)
  kinds <- unique(types[types != "NULL"])
  all(plain) && length(kinds) <= 1L && all(kinds %in% c("logical", "integer", "double", "character"))
}

# Attributes a column keeps beyond what its Arrow type says (levels come from the dictionary).
.column_attributes <- function(x) {
  a <- attributes(x)
  a$levels <- NULL
  a$names <- NULL
  if (length(a)) a else NULL
}

# What R needs to give every column back as it was written: classes, time zones, units and
# any other attribute, the storage type, the frame's class and row names.
.r_metadata <- function(x) {
  rn <- .row_names_info(x, type = 0L)
  meta <- list(
    format = 1L,
    class = class(x),
    row.names = if (is.character(rn)) rn else NULL,
    types = vapply(x, typeof, ""),
    attributes = lapply(x, .column_attributes)
  )
  rawToChar(serialize(meta, NULL, ascii = TRUE))
}

.table_options <- function(codec, level, threads, rows_per_group = NULL, sorted_by = NULL,
                           metadata = character(), sync = NULL) {
  if (!is.null(codec) && (!is.character(codec) || length(codec) != 1L || is.na(codec))) {
    stop("kompakt: codec must be NULL or one string such as \"zstd\", \"lz4\", \"zstd:3\" or \"60\"",
         call. = FALSE)
  }
  if (!is.null(level) && (!is.numeric(level) || length(level) != 1L || is.na(level) || level != round(level))) {
    stop("kompakt: level must be NULL or one whole number", call. = FALSE)
  }
  # The range (0 for all cores, at most 256) is the C API's to check, with every front end's message.
  if (!is.numeric(threads) || length(threads) != 1L || is.na(threads) || threads != round(threads)) {
    stop("kompakt: threads must be one whole number, 0 (all cores) to 256", call. = FALSE)
  }
  if (!is.null(rows_per_group) &&
      (!is.numeric(rows_per_group) || length(rows_per_group) != 1L || is.na(rows_per_group) ||
       rows_per_group < 1 || rows_per_group > 16777216)) {
    stop("kompakt: rows_per_group must be NULL or a number of rows, 1 to 16777216", call. = FALSE)
  }
  sorted_by <- as.character(sorted_by)
  # Text pages take zstd from R, where kompakt's default is LZ4: reading strings into R costs
  # the same whatever the codec (R makes each one a CHARSXP: 20 s for 2e7 strings), so only
  # the file's size is left to choose, and zstd halves it (docs/DESIGN.md, "R tables").
  string_codec <- if (is.null(codec) && is.null(level)) "zstd:2" else NULL
  list(codec = codec, level = level, threads = threads,
       rows_per_group = as.numeric(if (is.null(rows_per_group)) 0 else rows_per_group),
       sort_columns = sorted_by, sort_descending = rep(FALSE, length(sorted_by)),
       sort_nulls_first = rep(TRUE, length(sorted_by)),
       metadata = structure(as.character(metadata), names = names(metadata) %||% character()),
       string_codec = string_codec, sync = sync)
}

.write_columns <- function(x, path, options, append) {
  if (!is.data.frame(x)) {
    stop(sprintf("kompakt: x must be a data frame (data.frame, data.table or tibble), not %s",
                 paste(class(x), collapse = "/")), call. = FALSE)
  }
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    stop("kompakt: path must be one path (a string)", call. = FALSE)
  }
  names <- names(x)
  if (anyNA(names) || any(names == "") || anyDuplicated(names)) {
    stop("kompakt: every column needs a name of its own", call. = FALSE)
  }
  columns <- unclass(x)
  attributes(columns) <- list(names = names)
  kinds <- vapply(seq_along(columns), function(j) .column_kind(columns[[j]], names[[j]]), 1L)
  tzones <- vapply(columns, function(c) {
    tz <- attr(c, "tzone")
    if (inherits(c, "POSIXct") && length(tz) && !is.na(tz[[1]])) as.character(tz[[1]]) else ""
  }, "")
  frame <- list(columns = columns, kinds = kinds, tzones = tzones, rows = as.numeric(nrow(x)))
  .Call(kpk_table_write_c, frame, path, options, append)
}

write_kpk_table <- function(x, path, codec = NULL, level = NULL, threads = 0L, sorted_by = NULL,
                            rows_per_group = NULL, sync = getOption("kompakt.sync")) {
  if (is.null(sorted_by) && inherits(x, "data.table")) sorted_by <- .key_as_sort_order(x)
  if (!is.null(sorted_by) && !all(sorted_by %in% names(x))) {
    stop(sprintf("kompakt: sorted_by names columns the data frame does not have: %s",
                 paste(setdiff(sorted_by, names(x)), collapse = ", ")), call. = FALSE)
  }
  options <- .table_options(codec, level, threads, rows_per_group, sorted_by, c(r = .r_metadata(x)), sync)
  .write_columns(x, path, options, append = FALSE)
  invisible(path)
}

# A data.table's key as the table's sort keys, as far as kompakt orders rows the same way:
# data.table orders factors by their codes and puts NaN first; kompakt orders dictionary columns
# by their values (bytes) and NaN last. The key stops before the first column where they differ.
.key_as_sort_order <- function(x) {
  key <- attr(x, "sorted")
  same <- vapply(key, function(k) {
    col <- x[[k]]
    if (is.factor(col)) return(identical(levels(col), sort(levels(col), method = "radix")))
    !(is.double(col) && !inherits(col, "integer64") && any(is.nan(col)))
  }, TRUE)
  key[seq_len(if (all(same)) length(key) else which(!same)[[1]] - 1L)]
}

append_kpk_table <- function(x, path, codec = NULL, level = NULL, threads = 0L) {
  .write_columns(x, path, .table_options(codec, level, threads), append = TRUE)
  invisible(path)
}

# An open table: the C handle and what its index says, in an environment (closed by the
# handle's finalizer, or at once by .close_table).
.open_table <- function(path, threads = 0L) {
  if (!(is.raw(path) || (is.character(path) && length(path) == 1L && !is.na(path)))) {
    stop("kompakt: path must be one path (a string) or a raw vector holding a table file", call. = FALSE)
  }
  ptr <- .Call(kpk_table_open_c, path, as.integer(threads))
  # The schema and R metadata of the table read last are kept under its fingerprint (which any
  # write to the file changes): a small read then skips building and parsing them again.
  fingerprint <- .Call(kpk_table_fingerprint_c, ptr)
  if (identical(.last_table$fingerprint, fingerprint)) {
    info <- .last_table$info
    meta <- .last_table$meta
  } else {
    info <- .Call(kpk_table_info_c, ptr)
    meta <- if (!is.null(info$r)) .parse_r_metadata(info$r, info$names) else NULL
    # Refused metadata is not kept: every read says so.
    if (is.null(info$r) || !is.null(meta)) {
      .last_table$fingerprint <- fingerprint
      .last_table$info <- info
      .last_table$meta <- meta
    }
  }
  t <- new.env(parent = emptyenv())
  t$fingerprint <- fingerprint
  t$ptr <- ptr
  t$info <- info
  t$meta <- meta
  t$source <- if (is.raw(path)) "<raw vector>" else path
  t
}
.last_table <- new.env(parent = emptyenv())

.close_table <- function(t) invisible(.Call(kpk_table_close_c, t$ptr))

# The last "r" metadata parsed and what it gave: small reads of one table parse it once.
.last_r_metadata <- new.env(parent = emptyenv())

# The "r" metadata R wrote, checked for the shape R writes (a file may come from anywhere).
# It is data, whoever wrote the file: R's unserializer never sees it unless kompakt's checker
# of R's format passes it as untrusted (no promise, function, environment, namespace, ...:
# see kpk_read()). A refused one gives the warning of unreadable metadata, naming what was
# refused, and the columns come back as their stored types: the table's data is still read.
.parse_r_metadata <- function(text, names) {
  if (identical(.last_r_metadata$text, text) && identical(.last_r_metadata$names, names)) {
    return(.last_r_metadata$meta)
  }
  raw <- charToRaw(text)
  refused <- .Call(kpk_rserial_check_c, raw)
  if (!is.null(refused)) {
    warning(sprintf(paste0("kompakt: the table's R metadata was not read (%s); kompakt never runs code from a ",
                           "table file, and its columns come back as their stored types"), refused),
            call. = FALSE)
    return(NULL)
  }
  meta <- tryCatch(unserialize(raw), error = function(e) NULL)
  # Each column's attributes: NULL or a list of named values (restored as they are, in C).
  attributes_ok <- function(a) {
    is.null(a) || (is.list(a) && length(names(a)) == length(a) && all(nzchar(names(a))))
  }
  ok <- is.list(meta) && identical(meta$format, 1L) && is.list(meta$attributes) &&
    is.character(meta$types) && is.character(meta$class) &&
    all(vapply(meta$attributes, attributes_ok, TRUE))
  if (!ok) {
    warning("kompakt: the table's R metadata is not readable; columns come back as their stored types",
            call. = FALSE)
    return(NULL)
  }
  # Which columns are integer64, found once rather than on every read.
  int64 <- meta$types == "double" &
    vapply(meta$attributes[names(meta$types)], function(a) "integer64" %in% a$class, TRUE)
  meta$int64 <- int64 & !is.na(int64)
  # The same by column position (NA, NULL for columns R did not write), for reads to index.
  at <- match(names, names(meta$types))
  meta$int64_at <- unname(meta$int64[at]) %in% TRUE
  meta$types_at <- unname(meta$types[at])
  meta$attributes_at <- unname(meta$attributes[names])
  .last_r_metadata$text <- text
  .last_r_metadata$names <- names
  .last_r_metadata$meta <- meta
  meta
}

.column_positions <- function(t, columns) {
  names <- t$info$names
  if (is.null(columns)) return(seq_along(names))
  if (is.character(columns)) {
    pos <- match(columns, names)
    if (anyNA(pos)) {
      stop(sprintf("kompakt: %s has no column %s; its columns are: %s", t$source,
                   paste(sprintf("'%s'", columns[is.na(pos)]), collapse = ", "),
                   paste(names, collapse = ", ")), call. = FALSE)
    }
    return(pos)
  }
  if (is.numeric(columns) && !anyNA(columns) && all(columns == round(columns)) &&
      all(columns >= 1 & columns <= length(names))) {
    return(as.integer(columns))
  }
  stop(sprintf("kompakt: columns must be names or positions 1 to %d", length(names)), call. = FALSE)
}

.row_range <- function(t, from, to) {
  n <- t$info$rows
  if (is.null(to)) to <- n
  # Each one whole number (checked without a helper: a small read spends microseconds here).
  ok <- is.numeric(from) && length(from) == 1L && !is.na(from) && from == round(from) &&
    is.numeric(to) && length(to) == 1L && !is.na(to) && to == round(to)
  # As read_fst(): a range that runs past the end reads the rows there.
  if (ok && to > n) to <- n
  if (!ok || from < 1 || from > to + 1) {
    stop(sprintf("kompakt: rows from = %s to = %s are not in 1..%.0f of %s",
                 format(from), format(to), n, t$source), call. = FALSE)
  }
  c(from - 1, to)
}

# Rows [lo, hi) (0-based) of the columns at `pos`, as a data frame of their R types; or, when
# `rows` is given, the rows at those positions (1-based, any order, repeats allowed), each row
# group holding any of them decoded once; or, when `filters` is given (.filter_spec), the rows
# of [lo, hi) that pass them, reading only the row groups that can hold one.
.columns_spec <- function(info, meta, pos) {
  names <- info$names[pos]
  if (is.null(meta)) {
    int64 <- logical(length(pos))
    types <- rep(NA_character_, length(pos))
    attrs <- vector("list", length(pos))
  } else {
    int64 <- meta$int64_at[pos]
    types <- meta$types_at[pos]
    attrs <- meta$attributes_at[pos]
  }
  # Attributes are set in C, on vectors nothing else references yet: from R, each would copy.
  list(columns = as.integer(pos - 1L), names = names, formats = info$formats[pos],
       dictionaries = info$dictionaries[pos], ordered = info$ordered[pos], int64 = int64,
       types = types, attributes = attrs, from = 0, to = 0, rows = NULL, filters = NULL)
}

.read_rows <- function(t, pos, lo, hi, as.data.table = FALSE, rows = NULL, filters = NULL) {
  info <- t$info
  meta <- t$meta
  # What the read asks of each column, kept for the last columns read, under their table's
  # fingerprint (a lazy table may be read after other tables were).
  if (identical(.last_table$spec_fingerprint, t$fingerprint) && identical(.last_table$spec_pos, pos)) {
    spec <- .last_table$spec
  } else {
    spec <- .columns_spec(info, meta, pos)
    .last_table$spec_fingerprint <- t$fingerprint
    .last_table$spec_pos <- pos
    .last_table$spec <- spec
  }
  names <- spec$names
  spec$from <- as.numeric(lo)
  spec$to <- as.numeric(hi)
  # (Assigning NULL would drop the element: the template holds NULL for both.)
  if (!is.null(rows)) spec$rows <- as.numeric(rows) - 1
  if (!is.null(filters)) spec$filters <- filters
  cols <- .Call(kpk_table_read_c, t$ptr, spec)
  n <- if (!is.null(filters)) attr(cols, "rows") else if (is.null(rows)) hi - lo else length(rows)
  frame_class <- if (is.null(meta)) "data.frame" else meta$class
  # Filtered rows are numbered anew (which rows passed is not returned).
  rn <- if (is.null(filters) && !is.null(meta$row.names) && length(meta$row.names) == info$rows) {
    # Repeated rows get unique names, as `[.data.frame` gives them ("a", "a.1").
    if (is.null(rows)) meta$row.names[(lo + 1):hi] else make.unique(meta$row.names[rows])
  }
  # The attributes at once, on the list nothing else references (structure(), setDT() and
  # data.table::setattr() cost tens of microseconds of a small read between them).
  compact_rn <- if (n > 0) c(NA_integer_, -as.integer(n)) else integer()
  df <- cols
  want_dt <- (isTRUE(as.data.table) || "data.table" %in% frame_class) && .have_data_table()
  if (want_dt) {
    # What setDT() makes of a fresh data frame: the class, plain row names, and (alloc.col)
    # room for columns added by reference. The key holds only for rows read in the table's
    # order: a range or the rows a filter kept, not rows taken by position.
    keys <- info$sort_columns
    sorted <- is.null(rows) && length(keys) && all(!info$sort_descending) && all(keys %in% names)
    attributes(df) <- c(list(names = names, row.names = compact_rn, class = c("data.table", "data.frame")),
                        if (sorted) list(sorted = keys))
    df <- data.table::alloc.col(df)
  } else {
    keep_class <- !"data.table" %in% frame_class && length(frame_class) &&
      frame_class[[length(frame_class)]] == "data.frame"
    attributes(df) <- list(names = names, row.names = if (!is.null(rn) && n > 0) rn else compact_rn,
                           class = if (keep_class) frame_class else "data.frame")
  }
  df
}

# Whether data.table can be loaded (asked once: requireNamespace() costs microseconds a call).
.have_data_table <- function() {
  if (is.null(.last_table$data_table)) .last_table$data_table <- requireNamespace("data.table", quietly = TRUE)
  .last_table$data_table
}

read_kpk_table <- function(path, columns = NULL, from = 1, to = NULL, as.data.table = FALSE, threads = 0L,
                           filters = NULL) {
  t <- .open_table(path, threads)
  on.exit(.close_table(t))
  pos <- .column_positions(t, columns)
  rows <- .row_range(t, from, to)
  .read_rows(t, pos, rows[[1]], rows[[2]], as.data.table, filters = .filter_spec(t, filters))
}

# ---- filters --------------------------------------------------------------------------------
# A filter is list(column, op, value): kompakt's ops ("==", "=", "!=", "<", "<=", ">", ">=",
# "in", "not in"), pyarrow's and the command line's. The C API takes the values as an Arrow array
# of the column's type: here they become what that type holds (whole numbers for an integer
# column, ticks for a timestamp, text for a string or factor column), and src/table_filter.c
# packs them. A value of another kind keeps its own type, and kompakt refuses it with the message
# every front end gives; an unknown column or op is kompakt's to refuse too.

# Every integer format's range: [lo, hi], as doubles that convert exactly.
.int_ranges <- list(c = c(-128, 127), C = c(0, 255), s = c(-32768, 32767), S = c(0, 65535),
                    i = c(-2147483648, 2147483647), I = c(0, 4294967295),
                    l = c(-2^63, 2^63 - 1024), L = c(0, 2^64 - 2048))

.filter_spec <- function(t, filters) {
  if (is.null(filters)) return(NULL)
  if (!is.list(filters)) {
    stop("kompakt: filters must be a list of filters, each list(column, op, value), such as ",
         "list(list(\"price\", \">=\", 10), list(\"city\", \"in\", c(\"Oslo\", \"Bergen\")))", call. = FALSE)
  }
  # One filter given alone: list("price", ">=", 10).
  if (length(filters) == 3L && is.character(filters[[1]]) && is.character(filters[[2]])) filters <- list(filters)
  lapply(seq_along(filters), function(k) .one_filter(t, filters[[k]], k))
}

.one_filter <- function(t, f, k) {
  nm <- names(f)
  if (is.list(f) && length(f) == 3L && !is.null(nm) && setequal(nm, c("column", "op", "value"))) {
    f <- f[c("column", "op", "value")]
  }
  one_string <- function(x) is.character(x) && length(x) == 1L && !is.na(x)
  if (!is.list(f) || length(f) != 3L || !one_string(f[[1]]) || !one_string(f[[2]])) {
    stop(sprintf(paste0("kompakt: filter %d must be list(column, op, value): a column name, an op ",
                        "(==, !=, <, <=, >, >=, in, not in) and the value(s), such as list(\"price\", \">=\", 10)"), k),
         call. = FALSE)
  }
  column <- f[[1]]
  op <- f[[2]]
  value <- f[[3]]
  if (is.factor(value)) value <- as.character(value)
  j <- match(column, t$info$names)
  format <- if (is.na(j)) NA_character_ else
    if (is.na(t$info$dictionaries[[j]])) t$info$formats[[j]] else t$info$dictionaries[[j]]
  # A Date, POSIXct or difftime column R stored as plain numbers: a value of its class as those
  # numbers (days, seconds, the column's units).
  r_attrs <- if (is.na(j)) NULL else t$meta$attributes[[column]]
  if (!is.na(format) && format %in% c("f", "g", names(.int_ranges)) && !is.null(r_attrs$class)) {
    if (inherits(value, "difftime") && "difftime" %in% r_attrs$class) {
      if (!is.null(r_attrs$units)) units(value) <- r_attrs$units
      value <- as.numeric(value)
    } else if (inherits(value, c("Date", "POSIXct")) && "Date" %in% r_attrs$class) {
      value <- as.numeric(as.Date(value))
    } else if (inherits(value, c("Date", "POSIXct")) && "POSIXct" %in% r_attrs$class) {
      value <- as.numeric(as.POSIXct(value))
    }
  }
  v <- .filter_values(value, op, format, column)
  list(column = column, op = v$op, values = v$values, format = v$format)
}

# `value` as values of Arrow type `format` (a column's; NA: unknown), with the op that keeps
# the filter's meaning: list(op, values, format).
.filter_values <- function(value, op, format, column) {
  is_time <- inherits(value, c("Date", "POSIXct", "difftime"))
  number <- is.numeric(value) && !is_time
  if (is.logical(value) && length(value) && all(is.na(value)) && !is.na(format) && format != "b") {
    value <- if (format %in% c("u", "U")) as.character(value) else as.double(value) # NA: a null
    number <- !format %in% c("u", "U")
  }
  if (!is.na(format)) {
    if (format == "b" && is.logical(value)) return(list(op = op, values = value, format = format))
    if (format %in% names(.int_ranges) && number) {
      if (inherits(value, "integer64") && format %in% c("l", "L")) return(list(op = op, values = value, format = format))
      return(c(.whole_filter(as.double(value), op, .int_ranges[[format]]), format = format))
    }
    if (format %in% c("f", "g") && number) return(list(op = op, values = as.double(value), format = format))
    if (format %in% c("u", "U") && is.character(value)) return(list(op = op, values = value, format = format))
    if (format %in% c("tdD", "tdm") && (inherits(value, "Date") || is.character(value))) {
      days <- if (inherits(value, "Date")) as.numeric(value) else
        tryCatch(as.numeric(as.Date(value)), error = function(e) rep(NA_real_, length(value)))
      if (any(is.na(days) & !is.na(value))) {
        stop(sprintf("kompakt: filter on '%s': %s is not a date", column,
                     paste(value[is.na(days) & !is.na(value)][1], collapse = "")), call. = FALSE)
      }
      if (format == "tdD") return(c(.whole_filter(days, op, .int_ranges$i), format = format))
      return(c(.whole_filter(days * 86400000, op, .int_ranges$l), format = format))
    }
    per_second <- unname(c(s = 1, m = 1e3, u = 1e6, n = 1e9)[substr(format, 3, 3)])
    if (startsWith(format, "ts") && inherits(value, c("POSIXct", "Date"))) {
      ticks <- as.numeric(as.POSIXct(value)) * per_second
      return(c(.whole_filter(ticks, op, .int_ranges$l), format = format))
    }
    if (startsWith(format, "tD") && (inherits(value, "difftime") || number)) {
      secs <- if (inherits(value, "difftime")) as.numeric(value, units = "secs") else as.double(value)
      return(c(.whole_filter(secs * per_second, op, .int_ranges$l), format = format))
    }
  }
  # Another kind of value (or an unknown column): its own type, which kompakt refuses by name.
  own <- if (is.logical(value)) list(values = value, format = "b") else
    if (inherits(value, "integer64")) list(values = value, format = "l") else
    if (inherits(value, "Date")) list(values = floor(as.numeric(value)), format = "tdD") else
    if (inherits(value, "POSIXct")) list(values = round(as.numeric(value) * 1e6), format = "tsu:") else
    if (is.integer(value)) list(values = value, format = "i") else
    if (is.double(value) && !is_time) list(values = value, format = "g") else
    if (is.character(value)) list(values = value, format = "u") else
    stop(sprintf(paste0("kompakt: filter on '%s': the value must be logical, numeric, character, factor, ",
                        "Date or POSIXct, not %s"), column, paste(class(value), collapse = "/")), call. = FALSE)
  # Only its type matters (kompakt refuses it): values past what the type holds become NA.
  if (own$format == "tdD") own$values[abs(own$values) > 2^31 - 1] <- NA
  if (own$format == "tsu:") own$values[abs(own$values) > 2^62] <- NA
  c(list(op = op), own)
}

# Numbers `v` compared with an integer column of range `r`: a value that is not whole or out of
# range becomes the bound that means the same (`x >= 2.5` is `x >= 3`; `x < 1e12` on int32
# passes every value), and the values an `in` list cannot match are dropped.
.whole_filter <- function(v, op, r) {
  ok <- is.na(v) | (v == floor(v) & v >= r[[1]] & v <= r[[2]])
  if (all(ok)) return(list(op = op, values = v))
  if (op %in% c("in", "not in")) return(list(op = op, values = v[ok]))
  clamp <- function(x) pmin(pmax(trunc(x), r[[1]]), r[[2]])
  if (length(v) != 1L || !op %in% c("==", "=", "!=", "<", "<=", ">", ">=")) {
    return(list(op = op, values = clamp(v))) # kompakt refuses the count or the op
  }
  none <- list(op = "in", values = v[0])
  every <- list(op = ">=", values = r[[1]]) # every row that is not null
  switch(op,
    "==" = , "=" = none,
    "!=" = every,
    ">" = , ">=" = {
      lo <- if (op == ">") floor(v) + 1 else ceiling(v)
      if (lo > r[[2]]) none else if (lo < r[[1]]) every else list(op = ">=", values = lo)
    },
    "<" = , "<=" = {
      hi <- if (op == "<") ceiling(v) - 1 else floor(v)
      if (hi < r[[1]]) none else if (hi > r[[2]]) every else list(op = "<=", values = hi)
    })
}

# Readable names of the Arrow types of a table's columns.
.type_names <- function(formats, dictionaries) {
  simple <- c(b = "bool", c = "int8", C = "uint8", s = "int16", S = "uint16", i = "int32", I = "uint32",
              l = "int64", L = "uint64", e = "float16", f = "float32", g = "float64", u = "utf8",
              U = "large_utf8", z = "binary", Z = "large_binary", tdD = "date32", tdm = "date64",
              `+l` = "list", `+L` = "large_list")
  out <- unname(simple[formats])
  ts <- startsWith(formats, "ts")
  out[ts] <- sprintf("timestamp[%s%s]", substr(formats[ts], 3, 3),
                     ifelse(nchar(formats[ts]) > 4, paste0(", ", substring(formats[ts], 5)), ""))
  out[is.na(out)] <- formats[is.na(out)]
  dict <- !is.na(dictionaries)
  out[dict] <- sprintf("dictionary<%s, %s>", out[dict], unname(simple[dictionaries[dict]]))
  out
}

kpk_table_info <- function(path) {
  t <- .open_table(path, 1L)
  on.exit(.close_table(t))
  .info_of(t)
}

.info_of <- function(t) {
  info <- t$info
  sizes <- .Call(kpk_table_sizes_c, t$ptr)
  r_class <- if (is.null(t$meta)) rep(NA_character_, length(info$names)) else
    vapply(info$names, function(n) paste(t$meta$attributes[[n]]$class %||% t$meta$types[[n]] %||% NA, collapse = "/"), "")
  structure(list(
    path = t$source,
    rows = info$rows,
    columns = data.frame(name = info$names, type = .type_names(info$formats, info$dictionaries),
                         r_class = unname(r_class), stored_bytes = sizes$stored,
                         encoded_bytes = sizes$encoded, stringsAsFactors = FALSE),
    sorted_by = info$sort_columns,
    rows_per_group = info$rows_per_group,
    file_size = info$file_size
  ), class = "kpk_table_info")
}

print.kpk_table_info <- function(x, ...) {
  cat(sprintf("kompakt table %s: %.0f rows x %d columns, %s\n", x$path, x$rows, nrow(x$columns),
              format(structure(x$file_size, class = "object_size"), units = "auto")))
  if (length(x$sorted_by)) cat("sorted by:", paste(x$sorted_by, collapse = ", "), "\n")
  print(x$columns, row.names = FALSE)
  invisible(x)
}

kpk_table <- function(path, threads = 0L) {
  t <- .open_table(path, threads)
  structure(list(handle = t), class = "kpk_table")
}

.rows_of <- function(t, i) {
  n <- t$info$rows
  if (is.logical(i)) {
    if (length(i) != n) stop(sprintf("kompakt: a logical row index must have %.0f values", n), call. = FALSE)
    i <- which(i)
  }
  if (!is.numeric(i) || anyNA(i) || any(i != round(i)) || any(i < 1 | i > n)) {
    stop(sprintf("kompakt: rows must be positions 1 to %.0f", n), call. = FALSE)
  }
  i
}

# The handle's environment (not `x$handle`: `$` is the column accessor of a kpk_table).
.handle <- function(x) .subset2(x, "handle")

`[.kpk_table` <- function(x, i, j, drop = FALSE, filters = NULL) {
  t <- .handle(x)
  if (!is.null(filters)) {
    # t[filters = f], t["col", filters = f], t[, c("a", "b"), filters = f]: the rows that pass.
    index <- nargs() - (!missing(drop)) - 1L
    if (index == 3L && !missing(i)) {
      stop("kompakt: rows are chosen by filters or by i, not both: t[, columns, filters = ...]", call. = FALSE)
    }
    cols <- if (index == 2L && !missing(i)) i else if (index == 3L && !missing(j)) j else NULL
    out <- .read_rows(t, .column_positions(t, cols), 0, t$info$rows, filters = .filter_spec(t, filters))
    return(if (isTRUE(drop) && ncol(out) == 1L) out[[1]] else out)
  }
  if (nargs() - (!missing(drop)) == 2L) { # t["col"] or t[c(1, 3)]: columns, every row
    if (missing(i)) return(.read_rows(t, seq_along(t$info$names), 0, t$info$rows))
    return(.read_rows(t, .column_positions(t, i), 0, t$info$rows))
  }
  pos <- .column_positions(t, if (missing(j)) NULL else j)
  if (missing(i)) {
    out <- .read_rows(t, pos, 0, t$info$rows)
  } else {
    rows <- .rows_of(t, i)
    if (!length(rows)) {
      out <- .read_rows(t, pos, 0, 0)
    } else {
      lo <- min(rows) - 1
      hi <- max(rows)
      if (identical(as.numeric(rows), as.numeric(seq(lo + 1, hi)))) {
        out <- .read_rows(t, pos, lo, hi)
      } else {
        # Scattered rows: a take decodes only the row groups that hold them, once each.
        out <- .read_rows(t, pos, 0, 0, rows = rows)
      }
    }
  }
  if (isTRUE(drop) && ncol(out) == 1L) out[[1]] else out
}

`[[.kpk_table` <- function(x, i) {
  t <- .handle(x)
  if (length(i) != 1L) stop("kompakt: [[ takes one column", call. = FALSE)
  .read_rows(t, .column_positions(t, i), 0, t$info$rows)[[1]]
}

`$.kpk_table` <- function(x, name) x[[name]]

# Integer, as a data frame's, while the rows fit (past 2^31 - 1 they are a double).
dim.kpk_table <- function(x) {
  rows <- .handle(x)$info$rows
  cols <- length(.handle(x)$info$names)
  if (rows <= .Machine$integer.max) c(as.integer(rows), cols) else c(rows, cols)
}

dimnames.kpk_table <- function(x) list(NULL, .handle(x)$info$names)

names.kpk_table <- function(x) .handle(x)$info$names

as.data.frame.kpk_table <- function(x, row.names = NULL, optional = FALSE, ...) {
  out <- x[]
  if (!is.null(row.names)) row.names(out) <- row.names
  out
}

print.kpk_table <- function(x, ...) {
  info <- .info_of(.handle(x))
  cat(sprintf("<kpk_table> %s: %.0f rows x %d columns\n", info$path, info$rows, nrow(info$columns)))
  print(info$columns[c("name", "type", "r_class")], row.names = FALSE)
  invisible(x)
}
