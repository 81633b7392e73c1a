/* The R package's glue for filtered table reads: the values of each filter, an R vector, as an
 * Arrow array of the type R/table.R chose for it (the column's, when the values fit it).
 *
 * R/table.R has already made the values what the column's type can hold (whole numbers for
 * integer columns, ticks for timestamps, text for strings and factors); this file packs them.
 * Every buffer is R_alloc'd (freed when the .Call returns, after an R error too); the arrays
 * are moved into kpk_table_read_where, whose release only marks them released. */
#include <R.h>
#include <Rinternals.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "glue.h"

static void release_values(struct ArrowArray *a) { a->release = NULL; }
static void release_type(struct ArrowSchema *s) { s->release = NULL; }

static void *zeroed(size_t n) {
    void *p = R_alloc(n ? n : 1, 1);
    memset(p, 0, n ? n : 1);
    return p;
}

/* R's NA_real_: NaN with low word 1954 (a NaN that is not NA is a value: NaN). */
static int is_na_real(double d) {
    if (!isnan(d)) return 0;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return (uint32_t)bits == 1954;
}

/* Whether element i of `x` (logical, integer, double, integer64 or character) is NA. */
static int missing(SEXP x, int int64, R_xlen_t i) {
    switch (TYPEOF(x)) {
    case LGLSXP: return LOGICAL(x)[i] == NA_LOGICAL;
    case INTSXP: return INTEGER(x)[i] == NA_INTEGER;
    case REALSXP: return int64 ? ((const int64_t *)REAL(x))[i] == INT64_MIN : is_na_real(REAL(x)[i]);
    case STRSXP: return STRING_ELT(x, i) == NA_STRING;
    default: return 1;
    }
}

/* Element i as a 64-bit integer (whole numbers, checked in R). */
static int64_t whole(SEXP x, int int64, R_xlen_t i) {
    switch (TYPEOF(x)) {
    case LGLSXP: return LOGICAL(x)[i];
    case INTSXP: return INTEGER(x)[i];
    default: return int64 ? ((const int64_t *)REAL(x))[i] : (int64_t)REAL(x)[i];
    }
}

static double real(SEXP x, int int64, R_xlen_t i) {
    switch (TYPEOF(x)) {
    case LGLSXP: return LOGICAL(x)[i];
    case INTSXP: return INTEGER(x)[i];
    default: return int64 ? (double)((const int64_t *)REAL(x))[i] : REAL(x)[i];
    }
}

/* The width of the fixed-width Arrow formats a filter's values may take; 0 for others. */
static size_t width_of(const char *f) {
    if (!strcmp(f, "c") || !strcmp(f, "C")) return 1;
    if (!strcmp(f, "s") || !strcmp(f, "S")) return 2;
    if (!strcmp(f, "i") || !strcmp(f, "I") || !strcmp(f, "f") || !strcmp(f, "tdD")) return 4;
    if (!strcmp(f, "l") || !strcmp(f, "L") || !strcmp(f, "g") || !strcmp(f, "tdm") || !strncmp(f, "ts", 2) ||
        !strncmp(f, "tD", 2))
        return 8;
    return 0;
}

/* `x` as an Arrow array of `format` ("b", a fixed-width number, date, timestamp or duration
 * format, "u", "U"), into `a` and `s`. */
static void values_array(SEXP x, const char *format, const char *column, struct ArrowArray *a, struct ArrowSchema *s) {
    R_xlen_t n = XLENGTH(x);
    int int64 = TYPEOF(x) == REALSXP && Rf_inherits(x, "integer64");
    memset(a, 0, sizeof *a);
    memset(s, 0, sizeof *s);
    s->format = format;
    s->name = "";
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = release_type;
    a->length = n;
    a->release = release_values;
    uint8_t *valid = zeroed((size_t)n / 8 + 1);
    for (R_xlen_t i = 0; i < n; i++) {
        if (missing(x, int64, i)) a->null_count++;
        else valid[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    const void **buffers = (const void **)zeroed(3 * sizeof(void *));
    a->buffers = buffers;
    buffers[0] = a->null_count ? valid : NULL;
    if (!strcmp(format, "b")) {
        if (TYPEOF(x) != LGLSXP) Rf_error("kompakt: internal error: filter on '%s': booleans from a %s", column, Rf_type2char(TYPEOF(x)));
        uint8_t *bits = zeroed((size_t)n / 8 + 1);
        for (R_xlen_t i = 0; i < n; i++)
            if (LOGICAL(x)[i] == TRUE) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        a->n_buffers = 2;
        buffers[1] = bits;
        return;
    }
    if (!strcmp(format, "u") || !strcmp(format, "U")) {
        /* utf8 (32-bit offsets) or large_utf8 (64-bit), as the column has them. */
        if (TYPEOF(x) != STRSXP) Rf_error("kompakt: internal error: filter on '%s': text from a %s", column, Rf_type2char(TYPEOF(x)));
        int large = format[0] == 'U';
        void *offsets = zeroed(((size_t)n + 1) * (large ? sizeof(int64_t) : sizeof(int32_t)));
        size_t total = 0;
        for (R_xlen_t i = 0; i < n; i++)
            if (STRING_ELT(x, i) != NA_STRING) total += strlen(Rf_translateCharUTF8(STRING_ELT(x, i)));
        if (!large && total > INT32_MAX) Rf_error("kompakt: filter on '%s': its values hold more than 2 GiB of text", column);
        char *data = zeroed(total);
        size_t at = 0;
        for (R_xlen_t i = 0; i <= n; i++) {
            if (large) ((int64_t *)offsets)[i] = (int64_t)at;
            else ((int32_t *)offsets)[i] = (int32_t)at;
            if (i == n || STRING_ELT(x, i) == NA_STRING) continue;
            const char *text = Rf_translateCharUTF8(STRING_ELT(x, i));
            size_t len = strlen(text);
            memcpy(data + at, text, len);
            at += len;
        }
        a->n_buffers = 3;
        buffers[1] = offsets;
        buffers[2] = data;
        return;
    }
    size_t width = width_of(format);
    if (width == 0) Rf_error("kompakt: internal error: filter on '%s': values of Arrow type '%s'", column, format);
    if (TYPEOF(x) != LGLSXP && TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP)
        Rf_error("kompakt: internal error: filter on '%s': numbers from a %s", column, Rf_type2char(TYPEOF(x)));
    uint8_t *v = zeroed((size_t)n * width);
    for (R_xlen_t i = 0; i < n; i++) {
        if (missing(x, int64, i)) continue;
        switch (format[0]) {
        case 'c': ((int8_t *)v)[i] = (int8_t)whole(x, int64, i); break;
        case 'C': ((uint8_t *)v)[i] = (uint8_t)whole(x, int64, i); break;
        case 's': ((int16_t *)v)[i] = (int16_t)whole(x, int64, i); break;
        case 'S': ((uint16_t *)v)[i] = (uint16_t)whole(x, int64, i); break;
        case 'i': ((int32_t *)v)[i] = (int32_t)whole(x, int64, i); break;
        case 'I': ((uint32_t *)v)[i] = (uint32_t)whole(x, int64, i); break;
        case 'L': ((uint64_t *)v)[i] = int64 ? (uint64_t)whole(x, int64, i) : (uint64_t)real(x, 0, i); break;
        case 'f': ((float *)v)[i] = (float)real(x, int64, i); break;
        case 'g': ((double *)v)[i] = real(x, int64, i); break;
        default: /* l, dates, timestamps, durations */
            if (width == 4) ((int32_t *)v)[i] = (int32_t)whole(x, int64, i);
            else ((int64_t *)v)[i] = whole(x, int64, i);
        }
    }
    a->n_buffers = 2;
    buffers[1] = v;
}

/* The filters R/table.R passes: a list of list(column, op, values, format), as the C API's
 * filters (R_alloc'd, with the strings they point at); their count goes to *n. */
kpk_filter *kpk_r_filters(SEXP filters, size_t *n) {
    if (TYPEOF(filters) != VECSXP) Rf_error("kompakt: internal error: filters must be a list");
    *n = (size_t)XLENGTH(filters);
    kpk_filter *out = zeroed((*n + 1) * sizeof(kpk_filter));
    for (size_t k = 0; k < *n; k++) {
        SEXP f = VECTOR_ELT(filters, (R_xlen_t)k);
        const char *column = kpk_r_string(kpk_r_field(f, "column"), "a filter's column");
        const char *op = kpk_r_string(kpk_r_field(f, "op"), "a filter's op");
        const char *format = kpk_r_string(kpk_r_field(f, "format"), "a filter's type");
        struct ArrowArray *a = zeroed(sizeof *a);
        struct ArrowSchema *s = zeroed(sizeof *s);
        values_array(kpk_r_field(f, "values"), format, column, a, s);
        out[k].column = column;
        out[k].op = op;
        out[k].values_schema = s;
        out[k].values = a;
    }
    return out;
}
