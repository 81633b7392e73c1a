/* The R package's glue for table files: R vectors to Arrow's C data interface and back.
 *
 * Writing: each column becomes an ArrowArray whose buffers point into the R vector where its
 * layout is Arrow's (integer, double, integer64, raw) and into buffers of the write where it is
 * not (validity bitmaps, logical bits, factor keys, dates, timestamps, strings), freed when the
 * write ends, after an R error too, so nothing leaks on a longjmp; the arrays are released
 * inside kpk_table_write, before that.
 *
 * Reading: fixed-width columns decode straight into the R vector (kpk_table_read_into); the
 * others (logical, factors, strings) come as Arrow arrays a chunk of rows at a time and are
 * copied into R vectors allocated once, so a read's memory stays near the data frame's size.
 *
 * The R side (R/table.R) chooses each column's kind and keeps R's attributes in the table's
 * metadata; this file converts values only. */
#include <R.h>
#include <Rinternals.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "kompakt.h"

/* R builds packages with -O2, which leaves the per-row loops below scalar; they are most of a
 * write's time on R's side. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* Column kinds, as R/table.R numbers them. */
enum {
    KIND_LOGICAL = 1,
    KIND_INTEGER = 2,
    KIND_DOUBLE = 3,
    KIND_STRING = 4,
    KIND_FACTOR = 5,
    KIND_DATE = 6,      /* double or integer days; date32 when every value is a whole day */
    KIND_TIMESTAMP = 7, /* POSIXct: timestamp[us] when every value is exact in microseconds */
    KIND_INT64 = 8,     /* bit64::integer64 */
    KIND_RAW = 9,
    KIND_LIST = 10,     /* a list of plain atomic vectors of one type (NULL: a null row) */
};

/* Rows converted per Arrow read: bounds the memory a read needs beside the data frame. Four
 * row groups of the default size: a chunk of 1M rows of text held 25 MB beside a frame of
 * 20 such columns (peak 1.13x the frame; 64K rows: see bench/RESULTS.md "R tables"). */
#define READ_CHUNK_ROWS (1 << 16)

/* Raises an R error with kompakt's last message, which names the file when there is one. */
static void table_error(const char *doing, const char *what) {
    char message[2048];
    snprintf(message, sizeof message, "%s", kpk_last_error());
    if (strncmp(message, what, strlen(what)) == 0) Rf_error("kompakt: %s: %s", doing, message);
    Rf_error("kompakt: %s %s: %s", doing, what, message);
}

/* ---- building Arrow arrays ---------------------------------------------------------------- */

/* Release callbacks: the write owns the memory (big_alloc, R_alloc), so releasing only marks
 * the struct. */
static void release_array(struct ArrowArray *a) {
    for (int64_t i = 0; i < a->n_children; i++)
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
    if (a->dictionary && a->dictionary->release) a->dictionary->release(a->dictionary);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
    if (s->dictionary && s->dictionary->release) s->dictionary->release(s->dictionary);
    s->release = NULL;
}

static void *big_alloc(size_t size);

/* `n` set bits (every value of a logical column TRUE). */
static const uint8_t *all_set(R_xlen_t n) {
    uint8_t *bits = (uint8_t *)big_alloc((size_t)(n / 8) + 1);
    memset(bits, 0xff, (size_t)(n / 8) + 1);
    return bits;
}

static void *zalloc(size_t n, size_t size) {
    void *p = R_alloc(n ? n : 1, size);
    memset(p, 0, (n ? n : 1) * size);
    return p;
}

/* The large buffers of a write (bitmaps, keys, dates, strings): malloc'd, not R_alloc'd. R
 * counts R_alloc memory towards its heap, and a large request sets off a full garbage
 * collection, which on a frame of millions of strings costs seconds. They are freed when the
 * write ends, after an R error too (R_UnwindProtect's cleanup in kpk_table_write_c). */
typedef struct {
    void **items;
    size_t len, cap;
} buffers;
static buffers *write_buffers; /* the running write's (R calls into a package one at a time) */

static void *big_alloc(size_t size) {
    buffers *b = write_buffers;
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        void **items = realloc(b->items, cap * sizeof(void *));
        if (items == NULL) Rf_error("kompakt: out of memory");
        b->items = items;
        b->cap = cap;
    }
    void *p = malloc(size ? size : 1);
    if (p == NULL) Rf_error("kompakt: out of memory (%.0f bytes)", (double)size);
    b->items[b->len++] = p;
    return p;
}

/* Grows a buffer big_alloc made. */
static void *big_realloc(void *p, size_t size) {
    buffers *b = write_buffers;
    for (size_t i = b->len; i-- > 0;) {
        if (b->items[i] != p) continue;
        void *q = realloc(p, size ? size : 1);
        if (q == NULL) Rf_error("kompakt: out of memory (%.0f bytes)", (double)size);
        b->items[i] = q;
        return q;
    }
    Rf_error("kompakt: internal error: growing a buffer that is not the write's");
    return NULL;
}

static void free_buffers(buffers *b) {
    for (size_t i = 0; i < b->len; i++) free(b->items[i]);
    free(b->items);
    memset(b, 0, sizeof *b);
}

static struct ArrowArray *new_array(int64_t length, int n_buffers) {
    struct ArrowArray *a = zalloc(1, sizeof *a);
    a->length = length;
    a->n_buffers = n_buffers;
    a->buffers = zalloc((size_t)n_buffers, sizeof(void *));
    a->release = release_array;
    return a;
}

static struct ArrowSchema *new_schema(const char *format, const char *name) {
    struct ArrowSchema *s = zalloc(1, sizeof *s);
    s->format = format;
    s->name = name;
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = release_schema;
    return s;
}

static char *copy_text(const char *text) {
    size_t n = strlen(text) + 1;
    char *out = R_alloc(n, 1);
    memcpy(out, text, n);
    return out;
}

/* R's NA_real_ is one NaN payload (R_IsNA is a function call): NaN with low word 1954. */
static inline int is_r_na(double d) {
    if (!isnan(d)) return 0;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return (uint32_t)bits == 1954;
}

/* A validity bitmap for `n` rows, NULL when every row is valid: a counting pass, then (when
 * some row is missing) the bits, eight rows to a byte. `v` is the vector's data, fetched once
 * (INTEGER() and friends are function calls outside R itself); `is_valid` says whether row j
 * holds a value. */
#define VALIDITY(name, type, data, is_valid)                                                 \
    static const uint8_t *name(SEXP x, R_xlen_t n, int64_t *nulls) {                        \
        const type *v = data(x);                                                             \
        R_xlen_t valid = 0;                                                                  \
        for (R_xlen_t j = 0; j < n; j++) valid += (is_valid);                                \
        *nulls = n - valid;                                                                  \
        if (valid == n) return NULL;                                                         \
        uint8_t *bits = (uint8_t *)big_alloc((size_t)(n / 8) + 1);                           \
        R_xlen_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8) {                                                         \
            unsigned b = 0;                                                                  \
            for (int k = 0; k < 8; k++) {                                                    \
                R_xlen_t j = i + k;                                                          \
                b |= (unsigned)(is_valid) << k;                                              \
            }                                                                                \
            bits[i >> 3] = (uint8_t)b;                                                       \
        }                                                                                    \
        unsigned b = 0;                                                                      \
        for (R_xlen_t j = i; j < n; j++) b |= (unsigned)(is_valid) << (j - i);              \
        bits[i >> 3] = (uint8_t)b;                                                           \
        return bits;                                                                         \
    }
VALIDITY(int_validity, int, INTEGER, v[j] != NA_INTEGER)
VALIDITY(real_validity, double, REAL, !is_r_na(v[j]))
VALIDITY(string_validity, SEXP, STRING_PTR_RO, v[j] != NA_STRING)
VALIDITY(int64_validity, int64_t, (const int64_t *)REAL, v[j] != INT64_MIN)
/* A logical vector's values as bits (NA: 0; its validity says it is missing). */
VALIDITY(true_bits, int, LOGICAL, v[j] != 0 && v[j] != NA_LOGICAL)

/* A string's UTF-8 bytes: its own for ASCII and UTF-8 strings (no copy), else translated into
 * R_alloc memory (the caller resets it with vmaxset). */
static const char *utf8_of(SEXP s, size_t *len) {
    const char *text = Rf_translateCharUTF8(s);
    *len = text == CHAR(s) ? (size_t)LENGTH(s) : strlen(text);
    return text;
}

/* Strings as Arrow utf8 (32-bit offsets), or large_utf8 when they need more: UTF-8 bytes,
 * translated from each string's declared encoding, in one pass into a growing buffer. */
static struct ArrowArray *string_array(SEXP x, const char **format, const char *column) {
    (void)column;
    R_xlen_t n = XLENGTH(x);
    struct ArrowArray *a = new_array(n, 3);
    a->buffers[0] = string_validity(x, n, &a->null_count);
    const SEXP *strings = STRING_PTR_RO(x);
    int64_t *offsets = (int64_t *)big_alloc(((size_t)n + 1) * sizeof(int64_t));
    size_t cap = (size_t)n * 8 + 64, at = 0;
    char *data = (char *)big_alloc(cap);
    for (R_xlen_t i = 0; i < n; i++) {
        offsets[i] = (int64_t)at;
        SEXP s = strings[i];
        if (s == NA_STRING) continue;
        const void *vmax = vmaxget();
        size_t len;
        const char *text = utf8_of(s, &len);
        if (at + len > cap) {
            while (at + len > cap) cap *= 2;
            data = (char *)big_realloc(data, cap);
        }
        memcpy(data + at, text, len);
        at += len;
        vmaxset(vmax);
    }
    offsets[n] = (int64_t)at;
    if (at <= INT32_MAX) {
        /* 32-bit offsets, narrowed in place (each lands at or before where it was read). */
        int32_t *narrow = (int32_t *)offsets;
        for (R_xlen_t i = 0; i <= n; i++) narrow[i] = (int32_t)offsets[i];
        *format = "u";
    } else {
        *format = "U";
    }
    a->buffers[1] = offsets;
    a->buffers[2] = data;
    return a;
}

/* One column: its array and schema. A Date or POSIXct column that date32 or timestamp[us]
 * cannot hold exactly goes as float64 (R restores its class from the metadata). */
static void column_array(SEXP x, int kind, const char *name, const char *tz, SEXP keep, R_xlen_t slot,
                         struct ArrowArray **out_a, struct ArrowSchema **out_s) {
    R_xlen_t n = XLENGTH(x);
    struct ArrowArray *a = NULL;
    const char *format = NULL;
    struct ArrowSchema *dictionary = NULL;
    int64_t ordered = 0;
    switch (kind) {
    case KIND_LOGICAL: {
        a = new_array(n, 2);
        a->buffers[0] = int_validity(x, n, &a->null_count);
        int64_t falses = 0;
        const uint8_t *bits = true_bits(x, n, &falses);
        a->buffers[1] = bits ? bits : all_set(n);
        format = "b";
        break;
    }
    case KIND_INTEGER:
        a = new_array(n, 2);
        a->buffers[0] = int_validity(x, n, &a->null_count);
        a->buffers[1] = INTEGER(x);
        format = "i";
        break;
    case KIND_DOUBLE:
        a = new_array(n, 2);
        a->buffers[0] = real_validity(x, n, &a->null_count);
        a->buffers[1] = REAL(x);
        format = "g";
        break;
    case KIND_INT64:
        a = new_array(n, 2);
        a->buffers[0] = int64_validity(x, n, &a->null_count);
        a->buffers[1] = REAL(x);
        format = "l";
        break;
    case KIND_RAW:
        a = new_array(n, 2);
        a->buffers[1] = RAW(x);
        format = "C";
        break;
    case KIND_STRING:
        a = string_array(x, &format, name);
        break;
    case KIND_FACTOR: {
        SEXP levels = Rf_getAttrib(x, R_LevelsSymbol);
        if (TYPEOF(x) != INTSXP || (levels != R_NilValue && TYPEOF(levels) != STRSXP))
            Rf_error("kompakt: column '%s': a factor must be integer codes with character levels", name);
        R_xlen_t nlevels = levels == R_NilValue ? 0 : XLENGTH(levels);
        a = new_array(n, 2);
        a->buffers[0] = int_validity(x, n, &a->null_count);
        int32_t *keys = (int32_t *)big_alloc((size_t)n * sizeof(int32_t));
        const int *codes = INTEGER(x);
        unsigned bad = 0;
        for (R_xlen_t i = 0; i < n; i++) {
            int c = codes[i], missing = c == NA_INTEGER;
            keys[i] = missing ? 0 : c - 1;
            bad |= (unsigned)!missing & ((unsigned)(c - 1) >= (unsigned)nlevels);
        }
        for (R_xlen_t i = 0; bad && i < n; i++)
            if (codes[i] != NA_INTEGER && (codes[i] < 1 || codes[i] > nlevels))
                Rf_error("kompakt: column '%s': factor code %d has no level", name, codes[i]);
        a->buffers[1] = keys;
        const char *dict_format;
        SEXP lv = levels == R_NilValue ? PROTECT(Rf_allocVector(STRSXP, 0)) : PROTECT(levels);
        a->dictionary = string_array(lv, &dict_format, name);
        UNPROTECT(1);
        if (a->dictionary->null_count > 0) Rf_error("kompakt: column '%s': a factor level is NA", name);
        dictionary = new_schema(dict_format, "");
        dictionary->flags = 0;
        ordered = Rf_inherits(x, "ordered") ? ARROW_FLAG_DICTIONARY_ORDERED : 0;
        format = "i";
        break;
    }
    case KIND_DATE: {
        /* date32 when every day is whole and fits; else the doubles as they are. */
        int whole = 1;
        if (TYPEOF(x) == REALSXP) {
            const double *v = REAL(x);
            for (R_xlen_t i = 0; i < n && whole; i++)
                whole = is_r_na(v[i]) || (isfinite(v[i]) && v[i] == floor(v[i]) && fabs(v[i]) <= INT32_MAX);
        }
        if (!whole) {
            column_array(x, KIND_DOUBLE, name, tz, keep, slot, out_a, out_s);
            return;
        }
        a = new_array(n, 2);
        if (TYPEOF(x) == INTSXP) {
            a->buffers[0] = int_validity(x, n, &a->null_count);
            a->buffers[1] = INTEGER(x);
        } else {
            a->buffers[0] = real_validity(x, n, &a->null_count);
            int32_t *days = (int32_t *)big_alloc((size_t)n * sizeof(int32_t));
            const double *v = REAL(x);
            for (R_xlen_t i = 0; i < n; i++) days[i] = is_r_na(v[i]) ? 0 : (int32_t)v[i];
            a->buffers[1] = days;
        }
        format = "tdD";
        break;
    }
    case KIND_TIMESTAMP: {
        /* timestamp[us] when every instant is exact in microseconds (reading gives back the
         * same double); else the doubles as they are. */
        const double *v = REAL(x);
        int64_t *micros = (int64_t *)big_alloc((size_t)n * sizeof(int64_t));
        int exact = 1;
        for (R_xlen_t i = 0; i < n && exact; i++) {
            if (is_r_na(v[i])) { micros[i] = 0; continue; }
            double us = nearbyint(v[i] * 1e6);
            exact = isfinite(v[i]) && fabs(us) < 9.0e15 && (double)(int64_t)us / 1e6 == v[i];
            micros[i] = exact ? (int64_t)us : 0;
        }
        if (!exact) {
            column_array(x, KIND_DOUBLE, name, tz, keep, slot, out_a, out_s);
            return;
        }
        a = new_array(n, 2);
        a->buffers[0] = real_validity(x, n, &a->null_count);
        a->buffers[1] = micros;
        size_t len = strlen(tz) + 5;
        char *f = R_alloc(len, 1);
        snprintf(f, len, "tsu:%s", tz);
        format = f;
        break;
    }
    case KIND_LIST: {
        /* Offsets over one vector of every element's values, which becomes the child array. */
        R_xlen_t total = 0;
        SEXPTYPE type = NILSXP;
        for (R_xlen_t i = 0; i < n; i++) {
            SEXP e = VECTOR_ELT(x, i);
            if (e == R_NilValue) continue;
            if (type == NILSXP) type = TYPEOF(e);
            if (TYPEOF(e) != type)
                Rf_error("kompakt: column '%s': list elements of types %s and %s; a list column holds one type",
                         name, Rf_type2char(type), Rf_type2char(TYPEOF(e)));
            total += XLENGTH(e);
        }
        if (type == NILSXP) type = LGLSXP;
        int child_kind = type == LGLSXP ? KIND_LOGICAL : type == INTSXP ? KIND_INTEGER
                       : type == REALSXP ? KIND_DOUBLE : type == STRSXP ? KIND_STRING : 0;
        if (!child_kind)
            Rf_error("kompakt: column '%s': list elements of type %s; list columns may hold logical, "
                     "integer, double or character vectors", name, Rf_type2char(type));
        int large = total > INT32_MAX;
        SEXP values = PROTECT(Rf_allocVector(type, total));
        void *offsets = big_alloc(((size_t)n + 1) * (large ? 8 : 4));
        uint8_t *valid = (uint8_t *)big_alloc((size_t)(n + 7) / 8);
        memset(valid, 0, (size_t)(n + 7) / 8);
        a = new_array(n, 2);
        R_xlen_t at = 0;
        for (R_xlen_t i = 0; i <= n; i++) {
            if (large) ((int64_t *)offsets)[i] = at;
            else ((int32_t *)offsets)[i] = (int32_t)at;
            if (i == n) break;
            SEXP e = VECTOR_ELT(x, i);
            if (e == R_NilValue) { a->null_count++; continue; }
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
            R_xlen_t m = XLENGTH(e);
            switch (type) {
            case LGLSXP: memcpy(LOGICAL(values) + at, LOGICAL(e), (size_t)m * sizeof(int)); break;
            case INTSXP: memcpy(INTEGER(values) + at, INTEGER(e), (size_t)m * sizeof(int)); break;
            case REALSXP: memcpy(REAL(values) + at, REAL(e), (size_t)m * sizeof(double)); break;
            default: for (R_xlen_t k = 0; k < m; k++) SET_STRING_ELT(values, at + k, STRING_ELT(e, k));
            }
            at += m;
        }
        a->buffers[0] = a->null_count ? valid : NULL;
        a->buffers[1] = offsets;
        a->n_children = 1;
        a->children = zalloc(1, sizeof(struct ArrowArray *));
        struct ArrowSchema **child_schema = zalloc(1, sizeof(struct ArrowSchema *));
        column_array(values, child_kind, "item", "", R_NilValue, 0, &a->children[0], &child_schema[0]);
        /* The child's buffers may be `values` itself: the caller keeps it until the write ends. */
        SET_VECTOR_ELT(keep, slot, values);
        UNPROTECT(1);
        struct ArrowSchema *s = new_schema(large ? "+L" : "+l", name);
        s->n_children = 1;
        s->children = child_schema;
        *out_a = a;
        *out_s = s;
        return;
    }
    default:
        Rf_error("kompakt: column '%s': unknown column kind %d", name, kind);
    }
    struct ArrowSchema *s = new_schema(format, name);
    s->dictionary = dictionary;
    s->flags |= ordered;
    *out_a = a;
    *out_s = s;
}

/* The options R passes: list(codec, level, threads, rows_per_group, sort_columns,
 * sort_descending, sort_nulls_first, metadata_keys, metadata_values, string_codec). */
static kpk_table_options table_options(SEXP o) {
    kpk_table_options opts;
    memset(&opts, 0, sizeof opts);
    SEXP codec = VECTOR_ELT(o, 0), level = VECTOR_ELT(o, 1);
    opts.codec = Rf_isNull(codec) ? NULL : Rf_translateCharUTF8(STRING_ELT(codec, 0));
    opts.level = Rf_isNull(level) ? KPK_LEVEL_DEFAULT : Rf_asInteger(level);
    opts.threads = Rf_asInteger(VECTOR_ELT(o, 2));
    opts.rows_per_group = (uint32_t)Rf_asReal(VECTOR_ELT(o, 3));
    SEXP sort = VECTOR_ELT(o, 4), desc = VECTOR_ELT(o, 5), nf = VECTOR_ELT(o, 6);
    opts.n_sort = (size_t)XLENGTH(sort);
    const char **names = (const char **)R_alloc(opts.n_sort + 1, sizeof(char *));
    uint8_t *d = (uint8_t *)R_alloc(opts.n_sort + 1, 1), *f = (uint8_t *)R_alloc(opts.n_sort + 1, 1);
    for (size_t i = 0; i < opts.n_sort; i++) {
        names[i] = Rf_translateCharUTF8(STRING_ELT(sort, (R_xlen_t)i));
        d[i] = (uint8_t)(LOGICAL(desc)[i] == TRUE);
        f[i] = (uint8_t)(LOGICAL(nf)[i] == TRUE);
    }
    opts.sort_columns = names;
    opts.sort_descending = d;
    opts.sort_nulls_first = f;
    SEXP keys = VECTOR_ELT(o, 7), values = VECTOR_ELT(o, 8);
    opts.n_metadata = (size_t)XLENGTH(keys);
    const char **k = (const char **)R_alloc(opts.n_metadata + 1, sizeof(char *));
    const char **v = (const char **)R_alloc(opts.n_metadata + 1, sizeof(char *));
    for (size_t i = 0; i < opts.n_metadata; i++) {
        k[i] = Rf_translateCharUTF8(STRING_ELT(keys, (R_xlen_t)i));
        v[i] = Rf_translateCharUTF8(STRING_ELT(values, (R_xlen_t)i));
    }
    opts.metadata_keys = k;
    opts.metadata_values = v;
    SEXP strings = VECTOR_ELT(o, 9);
    opts.string_codec = Rf_isNull(strings) ? NULL : Rf_translateCharUTF8(STRING_ELT(strings, 0));
    return opts;
}

typedef struct {
    SEXP columns, kinds, tzones, nrow, file, options, append;
    buffers bufs;
} write_job;

static SEXP write_body(void *data) {
    write_job *job = data;
    SEXP columns = job->columns, kinds = job->kinds, tzones = job->tzones;
    R_xlen_t ncol = XLENGTH(columns);
    SEXP names = Rf_getAttrib(columns, R_NamesSymbol);
    double rows = Rf_asReal(job->nrow);
    /* Vectors made for the write (a list column's values) that its arrays point into. */
    SEXP keep = PROTECT(Rf_allocVector(VECSXP, ncol));
    struct ArrowArray *batch = new_array((int64_t)rows, 1);
    struct ArrowSchema *schema = new_schema("+s", "");
    schema->flags = 0;
    batch->n_children = schema->n_children = ncol;
    batch->children = zalloc((size_t)ncol, sizeof(struct ArrowArray *));
    schema->children = zalloc((size_t)ncol, sizeof(struct ArrowSchema *));
    for (R_xlen_t j = 0; j < ncol; j++) {
        SEXP x = VECTOR_ELT(columns, j);
        const char *name = copy_text(Rf_translateCharUTF8(STRING_ELT(names, j)));
        if ((double)XLENGTH(x) != rows)
            Rf_error("kompakt: column '%s' has %.0f rows, the table %.0f", name, (double)XLENGTH(x), rows);
        const char *tz = Rf_translateCharUTF8(STRING_ELT(tzones, j));
        column_array(x, INTEGER(kinds)[j], name, tz, keep, j, &batch->children[j], &schema->children[j]);
    }
    kpk_table_options opts = table_options(job->options);
    const char *path = R_ExpandFileName(Rf_translateCharUTF8(STRING_ELT(job->file, 0)));
    uint64_t appended = 0;
    int append = Rf_asLogical(job->append) == TRUE;
    kpk_status status = append ? kpk_table_append(path, schema, batch, &opts, &appended)
                               : kpk_table_write(path, schema, batch, &opts);
    /* kompakt moved the batch in; the schema stays ours. */
    if (batch->release) batch->release(batch);
    schema->release(schema);
    UNPROTECT(1);
    if (status != KPK_OK) table_error(append ? "cannot append to" : "cannot write", path);
    return Rf_ScalarReal((double)appended);
}

static void write_cleanup(void *data, Rboolean jump) {
    (void)jump;
    write_job *job = data;
    free_buffers(&job->bufs);
    write_buffers = NULL;
}

/* kpk_table_write_c(columns, kinds, tzones, nrow, path, options, append) */
SEXP kpk_table_write_c(SEXP columns, SEXP kinds, SEXP tzones, SEXP nrow, SEXP file, SEXP options, SEXP append) {
    write_job *job = (write_job *)R_alloc(1, sizeof(write_job));
    memset(job, 0, sizeof *job);
    job->columns = columns;
    job->kinds = kinds;
    job->tzones = tzones;
    job->nrow = nrow;
    job->file = file;
    job->options = options;
    job->append = append;
    SEXP cont = PROTECT(R_MakeUnwindCont());
    write_buffers = &job->bufs;
    SEXP out = R_UnwindProtect(write_body, job, write_cleanup, job, cont);
    UNPROTECT(1);
    return out;
}

/* ---- reading ----------------------------------------------------------------------------- */

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
    int32_t th = Rf_asInteger(threads);
    if (TYPEOF(source) == RAWSXP) {
        if (kpk_table_open_memory(RAW(source), (size_t)XLENGTH(source), th, &t) != KPK_OK)
            table_error("cannot read", "the raw vector");
    } else {
        const char *path = R_ExpandFileName(Rf_translateCharUTF8(STRING_ELT(source, 0)));
        if (kpk_table_open_file(path, th, &t) != KPK_OK) table_error("cannot read", path);
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

static SEXP bytes_string(kpk_bytes *b) {
    SEXP out = PROTECT(Rf_ScalarString(Rf_mkCharLenCE((const char *)b->data, (int)b->len, CE_UTF8)));
    kpk_bytes_free(b);
    UNPROTECT(1);
    return out;
}

/* list(nrow, names, formats, dictionary formats, ordered, r metadata or NULL, sort columns,
 * sort descending, sort nulls first, file size, rows per group): what every read needs, from
 * the footer (no pass over the page index). */
SEXP kpk_table_info_c(SEXP ptr) {
    kpk_table *t = table_of(ptr);
    struct ArrowSchema schema;
    if (kpk_table_schema(t, &schema) != KPK_OK) table_error("cannot read", "the table's schema");
    R_xlen_t ncol = (R_xlen_t)schema.n_children;
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 11));
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
    if (kpk_table_metadata(t, "r", &meta, &found) != KPK_OK) table_error("cannot read", "the table's metadata");
    SET_VECTOR_ELT(out, 5, found ? bytes_string(&meta) : R_NilValue);
    size_t nsort = kpk_table_sort_key_count(t);
    SEXP sc = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)nsort));
    SEXP sd = PROTECT(Rf_allocVector(LGLSXP, (R_xlen_t)nsort)), sn = PROTECT(Rf_allocVector(LGLSXP, (R_xlen_t)nsort));
    for (size_t i = 0; i < nsort; i++) {
        kpk_bytes col = {0};
        int32_t d = 0, nf = 0;
        if (kpk_table_sort_key(t, i, &col, &d, &nf) != KPK_OK) table_error("cannot read", "the table's sort keys");
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

/* list(stored bytes, decoded bytes) per column, from a pass over the page index. */
SEXP kpk_table_sizes_c(SEXP ptr) {
    kpk_table *t = table_of(ptr);
    R_xlen_t ncol = (R_xlen_t)kpk_table_num_columns(t);
    uint64_t *s = (uint64_t *)R_alloc((size_t)ncol + 1, sizeof(uint64_t));
    uint64_t *e = (uint64_t *)R_alloc((size_t)ncol + 1, sizeof(uint64_t));
    if (kpk_table_column_sizes(t, s, e, (size_t)ncol) != KPK_OK) table_error("cannot read", "the table's index");
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
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
 * it holds (in that order, repeats allowed: a take, which decodes each row group once). */
typedef struct {
    uint64_t from, to;
    const uint64_t *rows;
    R_xlen_t n;
} row_selection;

/* Reads a fixed-width column's rows into `dst`; returns the validity bitmap (R_alloc) or NULL
 * when every row is valid. */
static const uint8_t *read_into(kpk_table *t, uint32_t col, const row_selection *sel, void *dst, size_t width,
                                const char *name) {
    size_t n = (size_t)sel->n;
    uint8_t *validity = R_alloc((n + 7) / 8 + 1, 1);
    int32_t has_nulls = 0;
    kpk_status status = sel->rows
        ? kpk_table_take_into(t, col, sel->rows, n, dst, n * width, validity, &has_nulls)
        : kpk_table_read_into(t, col, sel->from, sel->to, dst, n * width, validity, &has_nulls);
    if (status != KPK_OK) table_error("cannot read column", name);
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

/* Dictionary keys of any integer width, 0-based, as 1-based factor codes. */
static void copy_keys(const struct ArrowArray *a, const char *format, SEXP out, R_xlen_t at, R_xlen_t nlevels) {
    const uint8_t *valid = a->null_count ? a->buffers[0] : NULL;
    int *codes = INTEGER(out) + at;
    for (int64_t i = 0; i < a->length; i++) {
        int64_t k = i + a->offset, key;
        switch (format[0]) {
        case 'c': key = ((const int8_t *)a->buffers[1])[k]; break;
        case 'C': key = ((const uint8_t *)a->buffers[1])[k]; break;
        case 's': key = ((const int16_t *)a->buffers[1])[k]; break;
        case 'S': key = ((const uint16_t *)a->buffers[1])[k]; break;
        case 'i': key = ((const int32_t *)a->buffers[1])[k]; break;
        case 'I': key = ((const uint32_t *)a->buffers[1])[k]; break;
        default: key = ((const int64_t *)a->buffers[1])[k]; break;
        }
        codes[i] = (valid && !VALID(valid, k)) || key < 0 || key >= nlevels ? NA_INTEGER : (int)key + 1;
    }
}

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
        if (status != KPK_OK) table_error("cannot read column", name);
        convert_job job = {&chunk, out, (R_xlen_t)k, format, name};
        R_UnwindProtect(convert_chunk, &job, release_chunk, &chunk, cont);
        R_CheckUserInterrupt();
        if (n == 0) break;
    }
    if (dict_format != NULL) {
        SEXP cls = PROTECT(Rf_allocVector(STRSXP, ordered ? 2 : 1));
        if (ordered) SET_STRING_ELT(cls, 0, Rf_mkChar("ordered"));
        SET_STRING_ELT(cls, ordered ? 1 : 0, Rf_mkChar("factor"));
        Rf_setAttrib(out, R_ClassSymbol, cls);
        UNPROTECT(1);
    }
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

/* kpk_table_read_c(ptr, columns (0-based), names, from, to, formats, dict formats, ordered,
 * int64 flags, R types (NA: none), R attributes (NULL: none), rows (NULL: rows [from, to);
 * else 0-based positions as doubles, taken in that order)): a list of the columns' R
 * vectors. */
SEXP kpk_table_read_c(SEXP ptr, SEXP columns, SEXP names, SEXP from, SEXP to, SEXP formats, SEXP dicts,
                      SEXP ordered, SEXP as_int64, SEXP types, SEXP attrs, SEXP rows) {
    kpk_table *t = table_of(ptr);
    row_selection sel = {(uint64_t)Rf_asReal(from), (uint64_t)Rf_asReal(to), NULL, 0};
    sel.n = (R_xlen_t)(sel.to - sel.from);
    if (rows != R_NilValue) {
        /* Positions were checked in R (whole numbers within the table). */
        if (TYPEOF(rows) != REALSXP) Rf_error("kompakt: rows must be a double vector");
        sel.n = XLENGTH(rows);
        uint64_t *positions = (uint64_t *)R_alloc((size_t)sel.n + 1, sizeof(uint64_t));
        for (R_xlen_t i = 0; i < sel.n; i++) positions[i] = (uint64_t)REAL(rows)[i];
        sel.rows = positions;
    }
    uint32_t rpg = kpk_table_rows_per_group(t);
    R_xlen_t ncol = XLENGTH(columns);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, ncol));
    for (R_xlen_t j = 0; j < ncol; j++) {
        uint32_t col = (uint32_t)INTEGER(columns)[j];
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
    UNPROTECT(1);
    return out;
}
