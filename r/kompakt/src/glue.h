/* What the C files of the R package share: R's arguments read into the C API's types, named
 * lists in and out of .Call, and kompakt's errors raised as R errors (options.c), and the
 * metadata of R object files (meta.c).
 *
 * Every .Call entry point that takes several options takes them as one named list, read here
 * by name, and every one that returns several values returns a named list: R and C never
 * depend on the order of a list. */
#ifndef KOMPAKT_R_GLUE_H
#define KOMPAKT_R_GLUE_H

#include <R.h>
#include <Rinternals.h>
#include <stddef.h>
#include <stdint.h>

#include "kompakt.h"

/* ---- errors ---- */

/* Raises an R error "kompakt: <doing>: <kompakt's last message>" (the message copied first:
 * R formats it before the longjmp, and the cleanup that follows may call kompakt again). */
void NORET kpk_r_error(const char *doing);
/* Raises `message` as a condition of class kompakt_<kind>_error (the status's kind) and
 * kompakt_error. */
void NORET kpk_r_stop(kpk_status status, const char *message);
/* As kpk_r_error, naming `what` (a file, a column) unless kompakt's message starts with it. */
void NORET kpk_r_error_about(const char *doing, const char *what);

/* ---- named lists ---- */

/* The element `name` of the named list `list` (an R error if it has none: R and C disagree). */
SEXP kpk_r_field(SEXP list, const char *name);
/* The element `name`, which must be of `type` and, unless `n` is negative, of length `n`. */
SEXP kpk_r_field_of(SEXP list, const char *name, SEXPTYPE type, R_xlen_t n);
/* A new list of `n` elements named `names` (unprotected: the caller protects it). */
SEXP kpk_r_named_list(int n, const char *const *names);

/* ---- arguments (each raises an R error naming the argument when it is not valid) ---- */

/* NULL or one string: a codec spec ("zstd", "lz4", "zstd:3", "60", "auto", "none"). */
const char *kpk_r_sync(SEXP sync);
const char *kpk_r_codec(SEXP codec);
/* NULL or a whole number, as the C API's `level`: the one place that maps R's level to it. */
int32_t kpk_r_level(SEXP level);
/* 0 (all cores) to 1024. */
int32_t kpk_r_threads(SEXP threads);
/* TRUE or FALSE. */
int kpk_r_flag(SEXP x, const char *what);
/* One string (UTF-8), for keys and namespaces. */
const char *kpk_r_string(SEXP x, const char *what);
/* One path, UTF-8, with a leading ~ expanded. */
const char *kpk_r_path(SEXP file);

/* ---- R object files (docs/FORMAT.md, "R object files") ---- */

/* The metadata kompakt for R writes into every R object file and store value. */
extern const char KPK_R_OBJECT_META[];

typedef enum {
    KPK_META_R_OBJECT,   /* an R object file this package reads: `stream` holds it */
    KPK_META_R_NEWER,    /* an R object file of a newer layout */
    KPK_META_R_DAMAGED,  /* says it is an R object file, but its description is not valid */
    KPK_META_PYTHON,     /* a Python object file (kompakt.save) */
    KPK_META_TABLE,      /* a table file */
    KPK_META_PLAIN,      /* anything else: plain data */
} kpk_meta_kind;

/* What a file's footer metadata (`len` bytes, not NUL-terminated) says it holds. The metadata
 * of object files is JSON (RFC 8259, whitespace anywhere between tokens): its "kompakt" member
 * names the kind, "version" the layout, "serialize"."stream" the stream of an R object (0 when
 * absent). */
kpk_meta_kind kpk_r_meta_kind(const uint8_t *meta, size_t len, uint32_t *stream);

#endif /* KOMPAKT_R_GLUE_H */
