/* The R package's glue for reading table files: Arrow's C data interface to R vectors.
 *
 * Fixed-width columns decode straight into the R vector (kpk_table_read_into); the others
 * (logical, factors, strings, lists) come as Arrow arrays a chunk of rows at a time and are
 * copied into R vectors allocated once, so a read's memory stays near the data frame's size.
 * Writing is table_write.c. */
#include <R.h>
#include <Rinternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "glue.h"

/* R builds packages with -O2, which leaves the per-row loops below scalar; they are most of a
 * table's time on R's side. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* Rows converted per Arrow read: bounds the memory a read needs beside the data frame. Four
 * row groups of the default size: a chunk of 1M rows of text held 25 MB beside a frame of
 * 20 such columns (peak 1.13x the frame; 64K rows: see bench/RESULTS.md "R tables"). */
#define READ_CHUNK_ROWS (1 << 16)

static void table_finalizer(SEXP ptr) {
    kpk_table_close((kpk_table *)R_ExternalPtrAddr(ptr));
    R_ClearExternalPtr(ptr);
}

static kpk_table *table_of(SEXP ptr) {
    if (TYPEOF(ptr) != EXTPTRSXP) Rf_error("kompakt: not a kompakt table");
    kpk_table *t = (kpk_table *)R_ExternalPtrAddr(ptr);
    if (t == NULL) Rf_error("kompakt: the table is closed");
    return t;
}

/* A table opened from a path, or from a raw vector (kept alive by the handle). */
SEXP kpk_table_open_c(SEXP source, SEXP threads) {
    kpk_table *t = NULL;
    int32_t th = kpk_r_threads(threads);
    if (TYPEOF(source) == RAWSXP) {
        if (kpk_table_open_memory(RAW(source), (size_t)XLENGTH(source), th, &t) != KPK_OK)
            kpk_r_error_about("cannot read", "the raw vector");
    } else {
        const char *path = kpk_r_path(source);
        if (kpk_table_open_file(path, th, &t) != KPK_OK) kpk_r_error_about("cannot read", path);
    }
    SEXP ptr = PROTECT(R_MakeExternalPtr(t, R_NilValue, TYPEOF(source) == RAWSXP ? source : R_NilValue));
    R_RegisterCFinalizerEx(ptr, table_finalizer, TRUE);
    UNPROTECT(1);
    return ptr;
}

SEXP kpk_table_close_c(SEXP ptr) {
    if (TYPEOF(ptr) == EXTPTRSXP) table_finalizer(ptr);
    return R_NilValue;
}

/* The table's fingerprint (kpk_table_fingerprint) as 16 hex digits: R keeps what it derives
 * from a table's schema and metadata under it. */
SEXP kpk_table_fingerprint_c(SEXP ptr) {
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)kpk_table_fingerprint(table_of(ptr)));
    return Rf_mkString(hex);
}

static SEXP bytes_string(kpk_bytes *b) {
    SEXP out = PROTECT(Rf_ScalarString(Rf_mkCharLenCE((const char *)b->data, (int)b->len, CE_UTF8)));
    kpk_bytes_free(b);
    UNPROTECT(1);
    return out;
}

/* What every read needs, from the footer (no pass over the page index), as a named list: rows,
 * names, formats (Arrow's), dictionaries (the dictionary format of each column, NA: none),
 * ordered, r (the "r" metadata, or NULL), sort_columns, sort_descending, sort_nulls_first,
 * file_size, rows_per_group. */
static const char *const INFO_NAMES[] = {"rows", "names", "formats", "dictionaries", "ordered", "r",
                                         "sort_columns", "sort_descending", "sort_nulls_first",
                                         "file_size", "rows_per_group"};
SEXP kpk_table_info_c(SEXP ptr) {
    kpk_table *t = table_of(ptr);
    struct ArrowSchema schema;
    if (kpk_table_schema(t, &schema) != KPK_OK) kpk_r_error_about("cannot read", "the table's schema");
    R_xlen_t ncol = (R_xlen_t)schema.n_children;
    SEXP out = PROTECT(kpk_r_named_list(11, INFO_NAMES));
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal((double)kpk_table_num_rows(t)));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, ncol)), formats = PROTECT(Rf_allocVector(STRSXP, ncol));
    SEXP dicts = PROTECT(Rf_allocVector(STRSXP, ncol)), ordered = PROTECT(Rf_allocVector(LGLSXP, ncol));
    for (R_xlen_t j = 0; j < ncol; j++) {
        struct ArrowSchema *c = schema.children[j];
        SET_STRING_ELT(names, j, Rf_mkCharCE(c->name ? c->name : "", CE_UTF8));
        SET_STRING_ELT(formats, j, Rf_mkCharCE(c->format, CE_UTF8));
        SET_STRING_ELT(dicts, j, c->dictionary ? Rf_mkCharCE(c->dictionary->format, CE_UTF8) : NA_STRING);
        LOGICAL(ordered)[j] = (c->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
    }
    schema.release(&schema);
    SET_VECTOR_ELT(out, 1, names);
    SET_VECTOR_ELT(out, 2, formats);
    SET_VECTOR_ELT(out, 3, dicts);
    SET_VECTOR_ELT(out, 4, ordered);
    kpk_bytes meta = {0};
    int32_t found = 0;
    if (kpk_table_metadata(t, "r", &meta, &found) != KPK_OK) kpk_r_error_about("cannot read", "the table's metadata");
    SET_VECTOR_ELT(out, 5, found ? bytes_string(&meta) : R_NilValue);
    size_t nsort = kpk_table_sort_key_count(t);
    SEXP sc = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)nsort));
    SEXP sd = PROTECT(Rf_allocVector(LGLSXP, (R_xlen_t)nsort)), sn = PROTECT(Rf_allocVector(LGLSXP, (R_xlen_t)nsort));
    for (size_t i = 0; i < nsort; i++) {
        kpk_bytes col = {0};
        int32_t d = 0, nf = 0;
        if (kpk_table_sort_key(t, i, &col, &d, &nf) != KPK_OK) kpk_r_error_about("cannot read", "the table's sort keys");
        SET_STRING_ELT(sc, (R_xlen_t)i, STRING_ELT(bytes_string(&col), 0));
        LOGICAL(sd)[i] = d;
        LOGICAL(sn)[i] = nf;
    }
    SET_VECTOR_ELT(out, 6, sc);
    SET_VECTOR_ELT(out, 7, sd);
    SET_VECTOR_ELT(out, 8, sn);
    SET_VECTOR_ELT(out, 9, Rf_ScalarReal((double)kpk_table_file_size(t)));
    SET_VECTOR_ELT(out, 10, Rf_ScalarReal((double)kpk_table_rows_per_group(t)));
    UNPROTECT(8);
    return out;
}

/* list(stored, encoded): the bytes each column takes in the file and decoded, from a pass
 * over the page index. */
static const char *const SIZES_NAMES[] = {"stored", "encoded"};
SEXP kpk_table_sizes_c(SEXP ptr) {
    kpk_table *t = table_of(ptr);
    R_xlen_t ncol = (R_xlen_t)kpk_table_num_columns(t);
    uint64_t *s = (uint64_t *)R_alloc((size_t)ncol + 1, sizeof(uint64_t));
    uint64_t *e = (uint64_t *)R_alloc((size_t)ncol + 1, sizeof(uint64_t));
    if (kpk_table_column_sizes(t, s, e, (size_t)ncol) != KPK_OK) kpk_r_error_about("cannot read", "the table's index");
    SEXP out = PROTECT(kpk_r_named_list(2, SIZES_NAMES));
    SEXP stored = PROTECT(Rf_allocVector(REALSXP, ncol)), encoded = PROTECT(Rf_allocVector(REALSXP, ncol));
    for (R_xlen_t j = 0; j < ncol; j++) {
        REAL(stored)[j] = (double)s[j];
        REAL(encoded)[j] = (double)e[j];
    }
    SET_VECTOR_ELT(out, 0, stored);
    SET_VECTOR_ELT(out, 1, encoded);
    UNPROTECT(3);
    return out;
}

/* The rows a read takes: [from, to), or, when `rows` is not NULL, the `n` 0-based positions
 * it holds (in that order, repeats allowed: a take, which decodes each row group once); or,
 * when `arrow` is not NULL, the rows of a filtered read already made: the column being
 * converted is that Arrow array (`arrow_schema` its type), `n` rows. */
typedef struct {
    uint64_t from, to;
    const uint64_t *rows;
    R_xlen_t n;
    const struct ArrowArray *arrow;
    const struct ArrowSchema *arrow_schema;
} row_selection;

/* A filtered read's column (`sel->arrow`) copied into `dst` as kpk_table_read_into decodes a
 * range: the values, the validity bits of the rows (when some are null) and *has_nulls. */
static void copy_arrow_into(const row_selection *sel, void *dst, size_t width, uint8_t *validity, int32_t *has_nulls,
                            const char *name) {
    const struct ArrowArray *a = sel->arrow;
    size_t n = (size_t)sel->n;
    if (a->length != (int64_t)n || a->n_buffers < 2)
        Rf_error("kompakt: internal error: column '%s' of the filtered read has %.0f rows, not %.0f", name,
                 (double)a->length, (double)n);
    if (n > 0) memcpy(dst, (const uint8_t *)a->buffers[1] + (size_t)a->offset * width, n * width);
    const uint8_t *bits = a->null_count != 0 ? a->buffers[0] : NULL;
    *has_nulls = 0;
    if (bits == NULL) return;
    memset(validity, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++) {
        size_t k = i + (size_t)a->offset;
        if ((bits[k >> 3] >> (k & 7)) & 1) validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        else *has_nulls = 1;
    }
}

/* Reads a fixed-width column's rows into `dst`; returns the validity bitmap (R_alloc) or NULL
 * when every row is valid. */
static const uint8_t *read_into(kpk_table *t, uint32_t col, const row_selection *sel, void *dst, size_t width,
                                const char *name) {
    size_t n = (size_t)sel->n;
    uint8_t *validity = (uint8_t *)R_alloc((n + 7) / 8 + 1, 1);
    int32_t has_nulls = 0;
    if (sel->arrow) {
        copy_arrow_into(sel, dst, width, validity, &has_nulls, name);
        return has_nulls ? validity : NULL;
    }
    kpk_status status = sel->rows
        ? kpk_table_take_into(t, col, sel->rows, n, dst, n * width, validity, &has_nulls)
        : kpk_table_read_into(t, col, sel->from, sel->to, dst, n * width, validity, &has_nulls);
    if (status != KPK_OK) kpk_r_error_about("cannot read column", name);
    return has_nulls ? validity : NULL;
}

#define VALID(bits, i) ((bits) == NULL || ((bits)[(i) >> 3] >> ((i) & 7)) & 1)

static uint64_t unit_per_second(char unit) {
    switch (unit) {
    case 's': return 1;
    case 'm': return 1000;
    case 'u': return 1000000;
    default: return 1000000000;
    }
}

/* The R vector of a fixed-width column, decoded in place where R's layout is Arrow's. */
static SEXP read_fixed(kpk_table *t, uint32_t col, const row_selection *sel, const char *format, int as_int64,
                       const char *type, const char *name) {
    R_xlen_t n = sel->n;
    SEXP out;
    if (!strcmp(format, "i") || (!strcmp(format, "tdD") && !strcmp(type, "integer"))) {
        /* int32, and date32 that R wrote from integer days: straight into the integer vector. */
        out = PROTECT(Rf_allocVector(INTSXP, n));
        const uint8_t *valid = read_into(t, col, sel, INTEGER(out), 4, name);
        int *iv = INTEGER(out);
        for (R_xlen_t i = 0; valid && i < n; i++)
            if (!VALID(valid, i)) iv[i] = NA_INTEGER;
    } else if (!strcmp(format, "g") || !strcmp(format, "f")) {
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        const uint8_t *valid;
        if (format[0] == 'g') {
            valid = read_into(t, col, sel, REAL(out), 8, name);
        } else {
            /* float32 decodes into the first half of the vector, widened from the end. */
            valid = read_into(t, col, sel, REAL(out), 4, name);
            const float *f = (const float *)REAL(out);
            for (R_xlen_t i = n - 1; i >= 0; i--) rv[i] = (double)f[i];
        }
        for (R_xlen_t i = 0; valid && i < n; i++)
            if (!VALID(valid, i)) rv[i] = NA_REAL;
    } else if (!strcmp(format, "C") && !strcmp(type, "raw")) {
        out = PROTECT(Rf_allocVector(RAWSXP, n));
        read_into(t, col, sel, RAW(out), 1, name);
    } else if (!strcmp(format, "c") || !strcmp(format, "C") || !strcmp(format, "s") || !strcmp(format, "S")) {
        /* Narrow integers decode into the front of the int vector, widened from the end. */
        out = PROTECT(Rf_allocVector(INTSXP, n));
        size_t width = (format[0] == 'c' || format[0] == 'C') ? 1 : 2;
        const uint8_t *valid = read_into(t, col, sel, INTEGER(out), width, name);
        int *v = INTEGER(out);
        for (R_xlen_t i = n - 1; i >= 0; i--) {
            int value;
            switch (format[0]) {
            case 'c': value = ((const int8_t *)v)[i]; break;
            case 'C': value = ((const uint8_t *)v)[i]; break;
            case 's': value = ((const int16_t *)v)[i]; break;
            default: value = ((const uint16_t *)v)[i]; break;
            }
            v[i] = VALID(valid, i) ? value : NA_INTEGER;
        }
    } else if (!strcmp(format, "l") || !strcmp(format, "L") || !strcmp(format, "I")) {
        /* 64-bit integers: integer64 when R wrote them or they do not fit an integer; unsigned
         * 32-bit: doubles. */
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        size_t width = format[0] == 'I' ? 4 : 8;
        const uint8_t *valid = read_into(t, col, sel, REAL(out), width, name);
        if (format[0] == 'I') {
            const uint32_t *u = (const uint32_t *)REAL(out);
            for (R_xlen_t i = n - 1; i >= 0; i--) rv[i] = VALID(valid, i) ? (double)u[i] : NA_REAL;
        } else if (format[0] == 'L') {
            const uint64_t *u = (const uint64_t *)REAL(out);
            for (R_xlen_t i = 0; i < n; i++) rv[i] = VALID(valid, i) ? (double)u[i] : NA_REAL;
        } else {
            int64_t *v = (int64_t *)REAL(out);
            int fits = !as_int64;
            for (R_xlen_t i = 0; i < n; i++) {
                if (!VALID(valid, i)) v[i] = INT64_MIN;
                else if (v[i] < -INT32_MAX || v[i] > INT32_MAX) fits = 0;
            }
            if (fits) {
                SEXP narrow = PROTECT(Rf_allocVector(INTSXP, n));
                for (R_xlen_t i = 0; i < n; i++) INTEGER(narrow)[i] = v[i] == INT64_MIN ? NA_INTEGER : (int)v[i];
                UNPROTECT(2);
                return narrow;
            }
            Rf_setAttrib(out, R_ClassSymbol, Rf_mkString("integer64"));
        }
    } else if (!strcmp(format, "tdD")) {
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        const uint8_t *valid = read_into(t, col, sel, REAL(out), 4, name);
        const int32_t *days = (const int32_t *)REAL(out);
        for (R_xlen_t i = n - 1; i >= 0; i--) rv[i] = VALID(valid, i) ? (double)days[i] : NA_REAL;
        Rf_setAttrib(out, R_ClassSymbol, Rf_mkString("Date"));
    } else if (!strcmp(format, "tdm")) {
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        const uint8_t *valid = read_into(t, col, sel, REAL(out), 8, name);
        const int64_t *ms = (const int64_t *)REAL(out);
        for (R_xlen_t i = 0; i < n; i++) rv[i] = VALID(valid, i) ? (double)ms[i] / 86400000.0 : NA_REAL;
        Rf_setAttrib(out, R_ClassSymbol, Rf_mkString("Date"));
    } else if (!strncmp(format, "ts", 2) || !strncmp(format, "tD", 2)) {
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        const uint8_t *valid = read_into(t, col, sel, REAL(out), 8, name);
        const int64_t *ticks = (const int64_t *)REAL(out);
        double per_second = (double)unit_per_second(format[2]);
        for (R_xlen_t i = 0; i < n; i++)
            rv[i] = VALID(valid, i) ? (double)ticks[i] / per_second : NA_REAL;
        if (format[1] == 's') {
            SEXP cls = PROTECT(Rf_allocVector(STRSXP, 2));
            SET_STRING_ELT(cls, 0, Rf_mkChar("POSIXct"));
            SET_STRING_ELT(cls, 1, Rf_mkChar("POSIXt"));
            Rf_setAttrib(out, R_ClassSymbol, cls);
            const char *tz = format[3] == ':' && format[4] ? format + 4 : "UTC";
            Rf_setAttrib(out, Rf_install("tzone"), Rf_mkString(tz));
            UNPROTECT(1);
        } else {
            Rf_setAttrib(out, R_ClassSymbol, Rf_mkString("difftime"));
            Rf_setAttrib(out, Rf_install("units"), Rf_mkString("secs"));
        }
    } else if (!strncmp(format, "d:", 2)) {
        /* decimal128 ("d:precision,scale"): doubles, as the arrow package reads them (exact up
         * to 15 significant digits). The 16-byte values decode into scratch memory first. */
        int precision = 0, scale = 0, bits = 128;
        if (sscanf(format, "d:%d,%d,%d", &precision, &scale, &bits) < 2 || bits != 128) return NULL;
        out = PROTECT(Rf_allocVector(REALSXP, n));
        double *rv = REAL(out);
        /* Each value is two's complement, little-endian: a low and a high 64-bit half. */
        uint64_t *raw = (uint64_t *)(void *)R_alloc(n > 0 ? (size_t)n * 2 : 2, sizeof(uint64_t));
        const uint8_t *valid = read_into(t, col, sel, raw, 16, name);
        double unit = pow(10.0, (double)scale);
        for (R_xlen_t i = 0; i < n; i++) {
            double value = (double)(int64_t)raw[2 * i + 1] * 18446744073709551616.0 + (double)raw[2 * i];
            rv[i] = VALID(valid, i) ? value / unit : NA_REAL;
        }
    } else {
        return NULL;
    }
    UNPROTECT(1);
    return out;
}

/* Copies the Arrow strings of `a` (utf8 or large_utf8) into `out` from position `at`. */
static void copy_strings(const struct ArrowArray *a, int large, SEXP out, R_xlen_t at) {
    const uint8_t *valid = a->null_count ? a->buffers[0] : NULL;
    const char *data = a->buffers[2];
    for (int64_t i = 0; i < a->length; i++) {
        int64_t k = i + a->offset;
        if (valid && !VALID(valid, k)) {
            SET_STRING_ELT(out, at + i, NA_STRING);
            continue;
        }
        int64_t start = large ? ((const int64_t *)a->buffers[1])[k] : ((const int32_t *)a->buffers[1])[k];
        int64_t end = large ? ((const int64_t *)a->buffers[1])[k + 1] : ((const int32_t *)a->buffers[1])[k + 1];
        if (end - start > INT32_MAX) Rf_error("kompakt: a string of %lld bytes is longer than R allows", (long long)(end - start));
        SET_STRING_ELT(out, at + i, Rf_mkCharLenCE(data + start, (int)(end - start), CE_UTF8));
    }
}

/* Dictionary keys of any integer width, 0-based, as 1-based factor codes (a loop per width:
 * a switch per key cost more than the copy). */
#define COPY_KEYS(type)                                                                          \
    do {                                                                                         \
        const type *keys = (const type *)a->buffers[1] + a->offset;                              \
        for (int64_t i = 0; i < a->length; i++) {                                                \
            int64_t key = (int64_t)keys[i];                                                      \
            codes[i] = (valid && !VALID(valid, i + a->offset)) || key < 0 || key >= nlevels       \
                           ? NA_INTEGER : (int)key + 1;                                          \
        }                                                                                        \
    } while (0)
static void copy_keys(const struct ArrowArray *a, const char *format, SEXP out, R_xlen_t at, R_xlen_t nlevels) {
    const uint8_t *valid = a->null_count ? a->buffers[0] : NULL;
    int *codes = INTEGER(out) + at;
    switch (format[0]) {
    case 'c': COPY_KEYS(int8_t); break;
    case 'C': COPY_KEYS(uint8_t); break;
    case 's': COPY_KEYS(int16_t); break;
    case 'S': COPY_KEYS(uint16_t); break;
    case 'i': COPY_KEYS(int32_t); break;
    case 'I': COPY_KEYS(uint32_t); break;
    default: COPY_KEYS(int64_t); break;
    }
}
#undef COPY_KEYS

/* Values [start, start + len) of a list's child array as an R vector. */
static SEXP child_slice(const struct ArrowArray *c, const char *f, int64_t start, int64_t len, const char *name) {
    const uint8_t *valid = c->null_count ? c->buffers[0] : NULL;
    SEXP out;
    if (!strcmp(f, "u") || !strcmp(f, "U")) {
        out = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)len));
        struct ArrowArray part = *c;
        part.offset = c->offset + start;
        part.length = len;
        copy_strings(&part, f[0] == 'U', out, 0);
        UNPROTECT(1);
        return out;
    }
    SEXPTYPE type = !strcmp(f, "b") ? LGLSXP
                  : (!strcmp(f, "i") || !strcmp(f, "c") || !strcmp(f, "C") || !strcmp(f, "s") || !strcmp(f, "S")) ? INTSXP
                  : (!strcmp(f, "g") || !strcmp(f, "f") || !strcmp(f, "l") || !strcmp(f, "I")) ? REALSXP : NILSXP;
    if (type == NILSXP) Rf_error("kompakt: column '%s': lists of Arrow type '%s' are not supported in R yet", name, f);
    out = PROTECT(Rf_allocVector(type, (R_xlen_t)len));
    const void *v = c->buffers[1];
    int *iv = type == REALSXP ? NULL : INTEGER(out); /* LOGICAL() and INTEGER() share a layout */
    double *rv = type == REALSXP ? REAL(out) : NULL;
    for (int64_t i = 0; i < len; i++) {
        int64_t k = c->offset + start + i;
        int ok = !valid || VALID(valid, k);
        switch (f[0]) {
        case 'b': iv[i] = ok ? (int)((((const uint8_t *)v)[k >> 3] >> (k & 7)) & 1) : NA_LOGICAL; break;
        case 'i': iv[i] = ok ? ((const int32_t *)v)[k] : NA_INTEGER; break;
        case 'c': iv[i] = ok ? ((const int8_t *)v)[k] : NA_INTEGER; break;
        case 'C': iv[i] = ok ? ((const uint8_t *)v)[k] : NA_INTEGER; break;
        case 's': iv[i] = ok ? ((const int16_t *)v)[k] : NA_INTEGER; break;
        case 'S': iv[i] = ok ? ((const uint16_t *)v)[k] : NA_INTEGER; break;
        case 'g': rv[i] = ok ? ((const double *)v)[k] : NA_REAL; break;
        case 'f': rv[i] = ok ? ((const float *)v)[k] : NA_REAL; break;
        case 'l': rv[i] = ok ? (double)((const int64_t *)v)[k] : NA_REAL; break;
        default: rv[i] = ok ? ((const uint32_t *)v)[k] : NA_REAL; break;
        }
    }
    UNPROTECT(1);
    return out;
}

typedef struct {
    struct ArrowSchema schema;
    struct ArrowArray array;
} arrow_chunk;

/* Releases a chunk after an R error too (R_UnwindProtect's cleanup). */
static void release_chunk(void *data, Rboolean jump) {
    (void)jump;
    arrow_chunk *c = data;
    if (c->array.release) c->array.release(&c->array);
    if (c->schema.release) c->schema.release(&c->schema);
}

typedef struct {
    arrow_chunk *chunk;
    SEXP out;
    R_xlen_t at;
    const char *format;
    const char *name;
} convert_job;

static SEXP convert_chunk(void *data) {
    convert_job *j = data;
    const struct ArrowArray *a = j->chunk->array.children[0];
    const char *f = j->chunk->schema.children[0]->format;
    if (!strcmp(f, "b")) {
        const uint8_t *valid = a->null_count ? a->buffers[0] : NULL, *bits = a->buffers[1];
        int *lv = LOGICAL(j->out) + j->at;
        for (int64_t i = 0; i < a->length; i++) {
            int64_t k = i + a->offset;
            lv[i] = valid && !VALID(valid, k) ? NA_LOGICAL : (int)((bits[k >> 3] >> (k & 7)) & 1);
        }
    } else if (!strcmp(f, "u") || !strcmp(f, "U")) {
        copy_strings(a, f[0] == 'U', j->out, j->at);
    } else if (!strcmp(f, "z") || !strcmp(f, "Z")) {
        int large = f[0] == 'Z';
        const uint8_t *valid = a->null_count ? a->buffers[0] : NULL;
        for (int64_t i = 0; i < a->length; i++) {
            int64_t k = i + a->offset;
            if (valid && !VALID(valid, k)) continue; /* NULL stays in the list */
            int64_t s = large ? ((const int64_t *)a->buffers[1])[k] : ((const int32_t *)a->buffers[1])[k];
            int64_t e = large ? ((const int64_t *)a->buffers[1])[k + 1] : ((const int32_t *)a->buffers[1])[k + 1];
            SEXP r = Rf_allocVector(RAWSXP, (R_xlen_t)(e - s));
            SET_VECTOR_ELT(j->out, j->at + i, r);
            memcpy(RAW(r), (const uint8_t *)a->buffers[2] + s, (size_t)(e - s));
        }
    } else if (!strcmp(f, "+l") || !strcmp(f, "+L")) {
        const struct ArrowArray *child = a->children[0];
        const char *cf = j->chunk->schema.children[0]->children[0]->format;
        const uint8_t *valid = a->null_count ? a->buffers[0] : NULL;
        for (int64_t i = 0; i < a->length; i++) {
            int64_t k = i + a->offset;
            if (valid && !VALID(valid, k)) continue; /* NULL stays in the list */
            int64_t s = f[1] == 'L' ? ((const int64_t *)a->buffers[1])[k] : ((const int32_t *)a->buffers[1])[k];
            int64_t e = f[1] == 'L' ? ((const int64_t *)a->buffers[1])[k + 1] : ((const int32_t *)a->buffers[1])[k + 1];
            SET_VECTOR_ELT(j->out, j->at + i, child_slice(child, cf, s, e - s, j->name));
        }
    } else if (a->dictionary) {
        SEXP levels = Rf_getAttrib(j->out, R_LevelsSymbol);
        if (levels == R_NilValue) {
            /* The first chunk's dictionary gives the levels (a table has one per column). */
            const char *df = j->chunk->schema.children[0]->dictionary->format;
            if (strcmp(df, "u") && strcmp(df, "U"))
                Rf_error("kompakt: column '%s': a dictionary of %s values is not a factor", j->name, df);
            levels = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)a->dictionary->length));
            copy_strings(a->dictionary, df[0] == 'U', levels, 0);
            Rf_setAttrib(j->out, R_LevelsSymbol, levels);
            UNPROTECT(1);
        }
        copy_keys(a, f, j->out, j->at, XLENGTH(levels));
    } else {
        Rf_error("kompakt: column '%s' has Arrow type '%s', which R cannot hold yet; " "read the other columns with columns =", j->name, f);
    }
    return R_NilValue;
}

/* A dictionary column's codes become a factor (ordered when its dictionary is). */
static void set_factor_class(SEXP out, const char *dict_format, int ordered) {
    if (dict_format == NULL) return;
    SEXP cls = PROTECT(Rf_allocVector(STRSXP, ordered ? 2 : 1));
    if (ordered) SET_STRING_ELT(cls, 0, Rf_mkChar("ordered"));
    SET_STRING_ELT(cls, ordered ? 1 : 0, Rf_mkChar("factor"));
    Rf_setAttrib(out, R_ClassSymbol, cls);
    UNPROTECT(1);
}

/* The R vector of a logical, string, binary or dictionary column, a chunk of rows at a time. */
static SEXP read_arrow(kpk_table *t, uint32_t col, const row_selection *sel, const char *format,
                       const char *dict_format, int ordered, const char *name, uint32_t rows_per_group) {
    R_xlen_t n = sel->n;
    SEXPTYPE type;
    if (!strcmp(format, "b")) type = LGLSXP;
    else if (!strcmp(format, "u") || !strcmp(format, "U")) type = STRSXP;
    else if (!strcmp(format, "z") || !strcmp(format, "Z") || !strcmp(format, "+l") || !strcmp(format, "+L")) type = VECSXP;
    else if (dict_format != NULL) type = INTSXP;
    else Rf_error("kompakt: column '%s' has Arrow type '%s', which R cannot hold yet; " "read the other columns with columns =", name, format);
    SEXP out = PROTECT(Rf_allocVector(type, n));
    if (sel->arrow) {
        /* A filtered read's column: converted as it is (the read owns and releases it). */
        arrow_chunk view;
        memset(&view, 0, sizeof view);
        struct ArrowArray *child = (struct ArrowArray *)sel->arrow;
        struct ArrowSchema *child_schema = (struct ArrowSchema *)sel->arrow_schema;
        view.array.n_children = view.schema.n_children = 1;
        view.array.children = &child;
        view.schema.children = &child_schema;
        view.array.length = child->length;
        convert_job job = {&view, out, 0, format, name};
        convert_chunk(&job);
        set_factor_class(out, dict_format, ordered);
        UNPROTECT(1);
        return out;
    }
    uint64_t step = READ_CHUNK_ROWS;
    if (rows_per_group > 0) step = (step / rows_per_group + 1) * rows_per_group;
    /* Read in chunks: a table at a URL fetches the whole range's pages at once instead of a
     * round trip per chunk. Only a hint: a failure shows in the reads. */
    if (sel->rows == NULL && (uint64_t)n > step) (void)kpk_table_prefetch(t, &col, 1, sel->from, sel->from + (uint64_t)n);
    SEXP cont = PROTECT(R_MakeUnwindCont());
    for (uint64_t k = 0; k < (uint64_t)n || (k == 0 && n == 0); k += step) {
        uint64_t m = (uint64_t)n - k < step ? (uint64_t)n - k : step;
        arrow_chunk chunk;
        memset(&chunk, 0, sizeof chunk);
        kpk_status status = sel->rows
            ? kpk_table_take(t, &col, 1, sel->rows + k, (size_t)m, &chunk.schema, &chunk.array)
            : kpk_table_read(t, &col, 1, sel->from + k, sel->from + k + m, &chunk.schema, &chunk.array);
        if (status != KPK_OK) kpk_r_error_about("cannot read column", name);
        convert_job job = {&chunk, out, (R_xlen_t)k, format, name};
        R_UnwindProtect(convert_chunk, &job, release_chunk, &chunk, cont);
        R_CheckUserInterrupt();
        if (n == 0) break;
    }
    set_factor_class(out, dict_format, ordered);
    UNPROTECT(2);
    return out;
}

/* Gives `x` (a vector this read made, referenced nowhere else) the attributes R wrote, in
 * place: setting them from R would copy every column. A factor keeps the levels its dictionary
 * gave. */
static void restore_attributes(SEXP x, SEXP attrs) {
    SEXP levels = PROTECT(Rf_getAttrib(x, R_LevelsSymbol));
    SET_ATTRIB(x, R_NilValue);
    SET_OBJECT(x, 0);
    if (levels != R_NilValue) Rf_setAttrib(x, R_LevelsSymbol, levels);
    SEXP names = Rf_getAttrib(attrs, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(attrs); i++)
        Rf_setAttrib(x, Rf_installChar(STRING_ELT(names, i)), VECTOR_ELT(attrs, i));
    UNPROTECT(1);
}

/* table_filter.c: the filters R/table.R made, as the C API's (R_alloc'd). */
kpk_filter *kpk_r_filters(SEXP filters, size_t *n);

/* The struct array of a filtered read, released by its holder's finalizer (after an R error
 * too) or at once by release_result. */
static void release_result(SEXP holder) {
    arrow_chunk *c = R_ExternalPtrAddr(holder);
    if (c == NULL) return;
    if (c->array.release) c->array.release(&c->array);
    if (c->schema.release) c->schema.release(&c->schema);
    free(c);
    R_ClearExternalPtr(holder);
}

/* kpk_table_read_c(ptr, spec): the columns' R vectors, a list. `spec` names, per column read:
 * columns (0-based positions), names, formats, dictionaries (NA: none), ordered, int64 (read
 * 64-bit integers as integer64), types (the R type to give, NA: the natural one), attributes
 * (R's, or NULL); and the rows: from and to (0-based, [from, to)), or rows (NULL, else 0-based
 * positions as doubles, taken in that order); filters (NULL, else a list of list(column, op,
 * values, format): the rows of [from, to) that pass them all, and the list has an attribute
 * "rows", their count). */
SEXP kpk_table_read_c(SEXP ptr, SEXP spec) {
    kpk_table *t = table_of(ptr);
    SEXP columns = kpk_r_field_of(spec, "columns", INTSXP, -1);
    R_xlen_t ncol = XLENGTH(columns);
    SEXP names = kpk_r_field_of(spec, "names", STRSXP, ncol);
    SEXP formats = kpk_r_field_of(spec, "formats", STRSXP, ncol);
    SEXP dicts = kpk_r_field_of(spec, "dictionaries", STRSXP, ncol);
    SEXP ordered = kpk_r_field_of(spec, "ordered", LGLSXP, ncol);
    SEXP as_int64 = kpk_r_field_of(spec, "int64", LGLSXP, ncol);
    SEXP types = kpk_r_field_of(spec, "types", STRSXP, ncol);
    SEXP attrs = kpk_r_field_of(spec, "attributes", VECSXP, ncol);
    SEXP rows = kpk_r_field(spec, "rows");
    SEXP filters = kpk_r_field(spec, "filters");
    row_selection sel = {(uint64_t)Rf_asReal(kpk_r_field_of(spec, "from", REALSXP, 1)),
                         (uint64_t)Rf_asReal(kpk_r_field_of(spec, "to", REALSXP, 1)), NULL, 0, NULL, NULL};
    if (sel.to < sel.from) Rf_error("kompakt: internal error: rows from %.0f to %.0f", (double)sel.from, (double)sel.to);
    sel.n = (R_xlen_t)(sel.to - sel.from);
    if (rows != R_NilValue) {
        /* Positions were checked in R (whole numbers within the table). */
        if (TYPEOF(rows) != REALSXP) Rf_error("kompakt: rows must be a double vector");
        sel.n = XLENGTH(rows);
        uint64_t *positions = (uint64_t *)R_alloc((size_t)sel.n + 1, sizeof(uint64_t));
        for (R_xlen_t i = 0; i < sel.n; i++) positions[i] = (uint64_t)REAL(rows)[i];
        sel.rows = positions;
    }
    arrow_chunk *result = NULL;
    SEXP holder = PROTECT(R_MakeExternalPtr(NULL, R_NilValue, R_NilValue));
    if (filters != R_NilValue) {
        size_t nfilters = 0;
        kpk_filter *f = kpk_r_filters(filters, &nfilters);
        uint32_t *cols = (uint32_t *)R_alloc((size_t)ncol + 1, sizeof(uint32_t));
        for (R_xlen_t j = 0; j < ncol; j++) cols[j] = (uint32_t)INTEGER(columns)[j];
        result = calloc(1, sizeof *result);
        if (result == NULL) Rf_error("kompakt: out of memory");
        R_SetExternalPtrAddr(holder, result);
        R_RegisterCFinalizerEx(holder, release_result, TRUE);
        if (kpk_table_read_where(t, cols, (size_t)ncol, sel.from, sel.to, f, nfilters, &result->schema,
                                 &result->array) != KPK_OK)
            kpk_r_error("cannot read the rows that pass the filters");
        if (result->array.n_children != ncol)
            Rf_error("kompakt: internal error: a filtered read of %.0f columns gave %.0f", (double)ncol,
                     (double)result->array.n_children);
        sel.n = (R_xlen_t)result->array.length;
    }
    uint32_t rpg = kpk_table_rows_per_group(t);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, ncol));
    for (R_xlen_t j = 0; j < ncol; j++) {
        uint32_t col = (uint32_t)INTEGER(columns)[j];
        if (result) {
            sel.arrow = result->array.children[j];
            sel.arrow_schema = result->schema.children[j];
        }
        const char *format = CHAR(STRING_ELT(formats, j));
        const char *dict = STRING_ELT(dicts, j) == NA_STRING ? NULL : CHAR(STRING_ELT(dicts, j));
        const char *name = Rf_translateCharUTF8(STRING_ELT(names, j));
        const char *type = STRING_ELT(types, j) == NA_STRING ? "" : CHAR(STRING_ELT(types, j));
        SEXP x = dict ? NULL : read_fixed(t, col, &sel, format, LOGICAL(as_int64)[j] == TRUE, type, name);
        if (x == NULL) x = read_arrow(t, col, &sel, format, dict, LOGICAL(ordered)[j] == TRUE, name, rpg);
        SET_VECTOR_ELT(out, j, x);
        if (*type && strcmp(Rf_type2char(TYPEOF(x)), type)) {
            /* A storage type this read does not make directly: converted (a copy). */
            SEXPTYPE want = Rf_str2type(type);
            if (want == (SEXPTYPE)-1) Rf_error("kompakt: column '%s': unknown R type '%s' in the table's R metadata", name, type);
            x = Rf_coerceVector(x, want);
            SET_VECTOR_ELT(out, j, x);
        }
        if (VECTOR_ELT(attrs, j) != R_NilValue) restore_attributes(x, VECTOR_ELT(attrs, j));
    }
    if (result) {
        Rf_setAttrib(out, Rf_install("rows"), Rf_ScalarReal((double)sel.n));
        release_result(holder);
    }
    UNPROTECT(2);
    return out;
}
