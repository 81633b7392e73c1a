/* The R package's glue for writing table files: R vectors to Arrow's C data interface.
 *
 * Each column becomes an ArrowArray whose buffers point into the R vector where its layout is
 * Arrow's (integer, double, integer64, raw) and into buffers of the write where it is not
 * (validity bitmaps, logical bits, factor keys, dates, timestamps, strings), freed when the
 * write ends, after an R error too, so nothing leaks on a longjmp; the arrays are released
 * inside kpk_table_write, before that. Number columns are converted by worker threads
 * (validity bitmaps, logical bits, factor keys: one pass over each row), strings on R's thread;
 * a new table goes to kpk_table_write_stream in slices, the numbers of the next slices
 * converted while the last is encoded (below, "the batch as a stream of rounds").
 *
 * The R side (R/table.R) chooses each column's kind and keeps R's attributes in the table's
 * metadata; this file converts values only. Reading is table_read.c. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>

#include "glue.h"

/* R builds packages with -O2, which leaves the per-row loops below scalar; they are most of a
 * table's time on R's side. */
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

/* Buffers of this size or more are asked for transparent huge pages: a 40 MB buffer of factor
 * keys, written once, otherwise faults in 10,000 pages of 4 KiB, each charged to the memory
 * cgroup (a third of the conversion's time on the project's machine). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)4 << 20)

static void *big_alloc(size_t size) {
    buffers *b = write_buffers;
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        void **items = realloc(b->items, cap * sizeof(void *));
        if (items == NULL) Rf_error("kompakt: out of memory");
        b->items = items;
        b->cap = cap;
    }
    void *p = NULL;
#if defined(MADV_HUGEPAGE)
    if (size >= HUGE_MIN) {
        size_t rounded = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        p = aligned_alloc(HUGE_PAGE, rounded);
        if (p != NULL) madvise(p, rounded, MADV_HUGEPAGE); /* advice: failure costs speed only */
    }
#endif
    if (p == NULL) p = malloc(size ? size : 1);
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
 * (STRING_PTR_RO is a function call outside R itself); `is_valid` says whether row j holds a
 * value. Strings only: the other kinds are converted by worker threads (below). */
static const uint8_t *string_validity(SEXP x, R_xlen_t n, int64_t *nulls) {
    const SEXP *v = STRING_PTR_RO(x);
    R_xlen_t valid = 0;
    for (R_xlen_t j = 0; j < n; j++) valid += v[j] != NA_STRING;
    *nulls = n - valid;
    if (valid == n) return NULL;
    uint8_t *bits = (uint8_t *)big_alloc((size_t)(n / 8) + 1);
    memset(bits, 0, (size_t)(n / 8) + 1);
    for (R_xlen_t j = 0; j < n; j++) bits[j >> 3] |= (uint8_t)((v[j] != NA_STRING) << (j & 7));
    return bits;
}

/* ---- converting numbers on worker threads ------------------------------------------------ */

/* What a number column's conversion does to its rows: plain loops over memory whose addresses
 * R's thread fetched (INTEGER(), REAL(): a compact sequence is expanded there), so worker
 * threads never call R. Each writes the validity bits and counts the valid rows in the same
 * pass; a row chunk at a time, so that the cores share even a one-column frame and each
 * chunk's rows are read from memory once. */
enum {
    CONVERT_INT,     /* int32: NA_INTEGER is missing */
    CONVERT_REAL,    /* double: R's NA_real_ is missing (NaN is a value) */
    CONVERT_INT64,   /* bit64::integer64: INT64_MIN is missing */
    CONVERT_LOGICAL, /* int32 logical: NA is missing, bits of TRUE into `out` */
    CONVERT_FACTOR,  /* 1-based codes into 0-based int32 keys in `out`; a code with no level is bad */
};

typedef struct {
    int op;
    const void *in;
    R_xlen_t n;
    uint8_t *valid;  /* n / 8 + 1 bytes */
    void *out;       /* the logical bits or the factor keys */
    size_t out_len;  /* bytes of `out` */
    int nlevels;
    const char *name; /* the column's, for errors */
    struct ArrowArray *array; /* its null_count and validity are set once every chunk is done */
    atomic_llong valid_rows;
    atomic_int bad;  /* some factor code has no level */
} conversion;

/* Rows a worker converts at a time: a multiple of 8 (chunks own whole bytes of the bitmaps). */
#define CONVERT_CHUNK ((R_xlen_t)1 << 18)

typedef struct {
    conversion **items;
    size_t len, cap;
    R_xlen_t lo, hi;       /* the rows being converted (of each conversion's own rows) */
    size_t chunks;         /* chunks of those rows over all conversions */
    atomic_size_t next;    /* the next chunk to take */
} conversions;
static conversions *write_conversions; /* the running write's */

/* Set bits of each byte (R builds packages for any x86-64: no popcount instruction). */
static const uint8_t bit_count[256] = {
#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
    B6(0), B6(1), B6(1), B6(2)
#undef B2
#undef B4
#undef B6
};

/* A chunk's validity bits, eight rows to a byte, `is_valid` saying whether row j holds a
 * value: all ones when every row is valid (the column may have missing rows elsewhere). */
#define VALIDITY_BITS(is_valid)                                                           \
    if (count == hi - lo) memset(valid + (lo >> 3), 0xff, (size_t)(hi - lo + 7) / 8);     \
    else for (R_xlen_t i = lo; i < hi; i += 8) {                                               \
        unsigned b = 0;                                                                   \
        R_xlen_t end = hi - i < 8 ? hi - i : 8;                                           \
        for (R_xlen_t k = 0; k < end; k++) {                                              \
            R_xlen_t j = i + k;                                                           \
            b |= (unsigned)(is_valid) << k;                                               \
        }                                                                                 \
        valid[i >> 3] = (uint8_t)b;                                                       \
    }

#if defined(__SSE2__)
#include <emmintrin.h>
/* Bit k set when v[k] is neither `a` nor `b`, for 8 ints (two compares and a movemask per 4). */
static inline unsigned neither_bits(const int *v, int a, int b) {
    __m128i va = _mm_set1_epi32(a), vb = _mm_set1_epi32(b);
    __m128i lo = _mm_loadu_si128((const __m128i *)v), hi = _mm_loadu_si128((const __m128i *)(v + 4));
    __m128i eq_lo = _mm_or_si128(_mm_cmpeq_epi32(lo, va), _mm_cmpeq_epi32(lo, vb));
    __m128i eq_hi = _mm_or_si128(_mm_cmpeq_epi32(hi, va), _mm_cmpeq_epi32(hi, vb));
    unsigned eq = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(eq_lo)) |
                  (unsigned)_mm_movemask_ps(_mm_castsi128_ps(eq_hi)) << 4;
    return ~eq & 0xffu;
}
#endif

/* Rows [lo, hi) of `c`; lo is a multiple of 8. The valid rows are counted first, a pass the
 * compiler vectorizes; bits are made only for a chunk with a missing row, from the chunk
 * still in the cache. */
static void convert_rows(conversion *c, R_xlen_t lo, R_xlen_t hi) {
    uint8_t *valid = c->valid;
    long long count = 0;
    unsigned bad = 0;
    switch (c->op) {
    case CONVERT_INT: {
        const int *v = c->in;
        for (R_xlen_t j = lo; j < hi; j++) count += v[j] != NA_INTEGER;
        VALIDITY_BITS(v[j] != NA_INTEGER)
        break;
    }
    case CONVERT_REAL: {
        const double *v = c->in;
        for (R_xlen_t j = lo; j < hi; j++) count += !is_r_na(v[j]);
        VALIDITY_BITS(!is_r_na(v[j]))
        break;
    }
    case CONVERT_INT64: {
        const int64_t *v = c->in;
        for (R_xlen_t j = lo; j < hi; j++) count += v[j] != INT64_MIN;
        VALIDITY_BITS(v[j] != INT64_MIN)
        break;
    }
    case CONVERT_LOGICAL: {
        /* Both bitmaps in one pass: every logical column needs its values' bits. */
        const int *v = c->in;
        uint8_t *values = c->out;
        R_xlen_t i = lo;
#if defined(__SSE2__)
        for (; i + 8 <= hi; i += 8) {
            unsigned b = neither_bits(v + i, NA_LOGICAL, NA_LOGICAL), t = neither_bits(v + i, NA_LOGICAL, 0);
            valid[i >> 3] = (uint8_t)b;
            values[i >> 3] = (uint8_t)t;
            count += bit_count[b];
        }
#endif
        for (; i < hi; i += 8) {
            unsigned b = 0, t = 0;
            R_xlen_t end = hi - i < 8 ? hi - i : 8;
            for (R_xlen_t k = 0; k < end; k++) {
                int x = v[i + k];
                b |= (unsigned)(x != NA_LOGICAL) << k;
                t |= (unsigned)(x != NA_LOGICAL && x != 0) << k;
            }
            valid[i >> 3] = (uint8_t)b;
            values[i >> 3] = (uint8_t)t;
            count += bit_count[b];
        }
        break;
    }
    case CONVERT_FACTOR: {
        const int *v = c->in;
        int32_t *keys = c->out;
        unsigned nlevels = (unsigned)c->nlevels;
        for (R_xlen_t j = lo; j < hi; j++) {
            int code = v[j];
            int missing = code == NA_INTEGER;
            keys[j] = missing ? 0 : code - 1;
            count += !missing;
            bad |= (unsigned)!missing & ((unsigned)code - 1u >= nlevels);
        }
        VALIDITY_BITS(v[j] != NA_INTEGER)
        break;
    }
    }
    atomic_fetch_add_explicit(&c->valid_rows, count, memory_order_relaxed);
    if (bad) atomic_store_explicit(&c->bad, 1, memory_order_relaxed);
}
#undef VALIDITY_BITS

/* The rows of `c` in the window [all->lo, all->hi): its chunks there. */
static size_t window_chunks(const conversions *all, const conversion *c) {
    R_xlen_t hi = c->n < all->hi ? c->n : all->hi;
    return hi > all->lo ? (size_t)((hi - all->lo + CONVERT_CHUNK - 1) / CONVERT_CHUNK) : 0;
}

/* Takes chunks of the window until none is left: conversion by conversion, chunk by chunk. */
static void *convert_worker(void *data) {
    conversions *all = data;
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&all->next, 1, memory_order_relaxed);
        if (k >= all->chunks) return NULL;
        for (size_t i = 0; i < all->len; i++) {
            conversion *c = all->items[i];
            size_t chunks = window_chunks(all, c);
            if (k >= chunks) { k -= chunks; continue; }
            R_xlen_t end = c->n < all->hi ? c->n : all->hi;
            R_xlen_t lo = all->lo + (R_xlen_t)k * CONVERT_CHUNK;
            R_xlen_t hi = end - lo < CONVERT_CHUNK ? end : lo + CONVERT_CHUNK;
            convert_rows(c, lo, hi);
            break;
        }
    }
}

/* Converts rows [lo, hi) of every conversion (lo a multiple of 8) on up to `threads` threads,
 * this one among them; each conversion's valid_rows counts those rows only. Calls no R. */
static void convert_window(conversions *all, R_xlen_t lo, R_xlen_t hi, int threads) {
    all->lo = lo;
    all->hi = hi;
    all->chunks = 0;
    for (size_t i = 0; i < all->len; i++) {
        atomic_store(&all->items[i]->valid_rows, 0);
        all->chunks += window_chunks(all, all->items[i]);
    }
    if ((size_t)threads > all->chunks) threads = all->chunks ? (int)all->chunks : 1;
    atomic_init(&all->next, 0);
    pthread_t helpers[64];
    int started = 0;
    for (int t = 1; t < threads && t <= 64; t++) {
        /* One that cannot start leaves its chunks to the others. */
        if (pthread_create(&helpers[started], NULL, convert_worker, all) == 0) started++;
    }
    convert_worker(all);
    for (int t = 0; t < started; t++) pthread_join(helpers[t], NULL);
}

static int resolve_threads(int threads) {
    if (threads > 0) return threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

/* Queues the conversion of a column of `n` rows whose array is `a` (filled in by
 * run_conversions), with an output buffer of `out_bytes` (none for 0). */
static conversion *convert_later(int op, const void *in, R_xlen_t n, struct ArrowArray *a, size_t out_bytes,
                           const char *name) {
    conversions *all = write_conversions;
    if (all->len == all->cap) {
        size_t cap = all->cap ? 2 * all->cap : 16;
        conversion **items = realloc(all->items, cap * sizeof *items);
        if (items == NULL) Rf_error("kompakt: out of memory");
        all->items = items;
        all->cap = cap;
    }
    conversion *c = (conversion *)big_alloc(sizeof *c);
    memset(c, 0, sizeof *c);
    c->op = op;
    c->in = in;
    c->n = n;
    c->valid = (uint8_t *)big_alloc((size_t)(n / 8) + 1);
    c->out = out_bytes ? big_alloc(out_bytes) : NULL;
    c->out_len = out_bytes;
    c->array = a;
    c->name = name;
    atomic_init(&c->valid_rows, 0);
    atomic_init(&c->bad, 0);
    all->items[all->len++] = c;
    return c;
}

/* The first row of [lo, hi) whose factor code has no level, or -1. */
static R_xlen_t first_bad_code(const conversion *c, R_xlen_t lo, R_xlen_t hi) {
    const int *codes = c->in;
    for (R_xlen_t j = lo; j < hi; j++)
        if (codes[j] != NA_INTEGER && (codes[j] < 1 || codes[j] > c->nlevels)) return j;
    return -1;
}

/* Runs the queued conversions on up to `threads` threads (0: one per core), this one among
 * them, then sets each array's null count and validity (none when every row is valid). A
 * factor code with no level is an R error here, naming the column. */
static void run_conversions(int threads) {
    conversions *all = write_conversions;
    convert_window(all, 0, R_XLEN_T_MAX, resolve_threads(threads));
    for (size_t i = 0; i < all->len; i++) {
        conversion *c = all->items[i];
        struct ArrowArray *a = c->array;
        a->null_count = (int64_t)(c->n - (R_xlen_t)atomic_load(&c->valid_rows));
        a->buffers[0] = a->null_count ? c->valid : NULL;
        if (c->op == CONVERT_LOGICAL) a->buffers[1] = c->out;
        R_xlen_t bad = atomic_load(&c->bad) ? first_bad_code(c, 0, c->n) : -1;
        if (bad >= 0) Rf_error("kompakt: column '%s': factor code %d has no level", c->name, ((const int *)c->in)[bad]);
    }
}

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
    case KIND_LOGICAL:
        a = new_array(n, 2);
        convert_later(CONVERT_LOGICAL, LOGICAL(x), n, a, (size_t)(n / 8) + 1, name);
        format = "b";
        break;
    case KIND_INTEGER:
        a = new_array(n, 2);
        convert_later(CONVERT_INT, INTEGER(x), n, a, 0, name);
        a->buffers[1] = INTEGER(x);
        format = "i";
        break;
    case KIND_DOUBLE:
        a = new_array(n, 2);
        convert_later(CONVERT_REAL, REAL(x), n, a, 0, name);
        a->buffers[1] = REAL(x);
        format = "g";
        break;
    case KIND_INT64:
        a = new_array(n, 2);
        convert_later(CONVERT_INT64, REAL(x), n, a, 0, name);
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
        conversion *keys = convert_later(CONVERT_FACTOR, INTEGER(x), n, a, (size_t)n * sizeof(int32_t), name);
        keys->nlevels = nlevels > INT_MAX ? INT_MAX : (int)nlevels;
        a->buffers[1] = keys->out;
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
            convert_later(CONVERT_INT, INTEGER(x), n, a, 0, name);
            a->buffers[1] = INTEGER(x);
        } else {
            convert_later(CONVERT_REAL, REAL(x), n, a, 0, name);
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
        convert_later(CONVERT_REAL, REAL(x), n, a, 0, name);
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
            if ((SEXPTYPE)TYPEOF(e) != type)
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

/* The options R passes, by name: codec, level, threads, rows_per_group (0: the default),
 * sort_columns (character), sort_descending and sort_nulls_first (logical, one per sort
 * column), metadata (a named character vector), string_codec (NULL or a codec). */
static kpk_table_options table_options(SEXP o) {
    kpk_table_options opts;
    memset(&opts, 0, sizeof opts);
    opts.size = sizeof opts;
    opts.sync = kpk_r_sync(kpk_r_field(o, "sync"));
    opts.codec = kpk_r_codec(kpk_r_field(o, "codec"));
    opts.level = kpk_r_level(kpk_r_field(o, "level"));
    opts.threads = kpk_r_threads(kpk_r_field(o, "threads"));
    opts.rows_per_group = (uint32_t)Rf_asReal(kpk_r_field_of(o, "rows_per_group", REALSXP, 1));
    SEXP sort = kpk_r_field_of(o, "sort_columns", STRSXP, -1);
    opts.n_sort = (size_t)XLENGTH(sort);
    SEXP desc = kpk_r_field_of(o, "sort_descending", LGLSXP, XLENGTH(sort));
    SEXP nf = kpk_r_field_of(o, "sort_nulls_first", LGLSXP, XLENGTH(sort));
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
    SEXP values = kpk_r_field_of(o, "metadata", STRSXP, -1);
    SEXP keys = Rf_getAttrib(values, R_NamesSymbol);
    opts.n_metadata = (size_t)XLENGTH(values);
    if (opts.n_metadata > 0 && TYPEOF(keys) != STRSXP) Rf_error("kompakt: internal error: metadata without names");
    const char **k = (const char **)R_alloc(opts.n_metadata + 1, sizeof(char *));
    const char **v = (const char **)R_alloc(opts.n_metadata + 1, sizeof(char *));
    for (size_t i = 0; i < opts.n_metadata; i++) {
        k[i] = Rf_translateCharUTF8(STRING_ELT(keys, (R_xlen_t)i));
        v[i] = Rf_translateCharUTF8(STRING_ELT(values, (R_xlen_t)i));
    }
    opts.metadata_keys = k;
    opts.metadata_values = v;
    opts.string_codec = kpk_r_codec(kpk_r_field(o, "string_codec"));
    return opts;
}

/* ---- the batch as a stream of rounds: converting ahead while the last is encoded -------- */

/* The C API encodes a stream's batches one at a time, in rounds of 16 row groups
 * (kpk_table_write_stream). The batch goes to it as a stream of slices of one round each, and
 * a helper thread converts the numbers of the slices after the first, in order, while the C
 * API encodes those before: the encoder's threads leave cores idle between and within rounds,
 * which the conversion fills (a slice is a fifth of the work of encoding it). The file's bytes
 * are those of the whole batch. Nothing here calls R: the C API calls back from its own
 * frames, where an R error's longjmp would be undefined behaviour. */
typedef struct {
    struct ArrowSchema *schema;   /* the write's, lent to the stream's get_schema */
    struct ArrowArray *batch;     /* the whole batch: its children are the columns */
    conversions *all;
    conversion **of_column;       /* the conversion of column j, or NULL */
    int64_t ncol, nchunks, next;  /* next: the slice get_next gives next */
    R_xlen_t rows, chunk;         /* rows of the batch, rows of a slice */
    int64_t *nulls;               /* nchunks * ncol: missing rows of each slice's columns */
    struct ArrowArray *slices;    /* nchunks top-level arrays */
    struct ArrowArray *columns;   /* nchunks * ncol column arrays, sliced */
    struct ArrowArray **column_ptrs;
    const void **column_buffers;  /* nchunks * ncol * 3, then one NULL */
    int threads;                  /* conversion threads of the first slice */
    pthread_t helper;
    int helper_running;
    pthread_mutex_t lock;
    pthread_cond_t converted;     /* signalled as `done` grows */
    int64_t done;                 /* slices converted; under `lock` */
    atomic_int stop;              /* the helper stops after its slice */
    char error[512];
} batch_stream;

/* The stream's arrays are slices of the write's buffers, which it frees when it ends. */
static void release_slice(struct ArrowArray *a) { a->release = NULL; }
static void release_lent_schema(struct ArrowSchema *s) { s->release = NULL; }

static void slice_rows(const batch_stream *st, int64_t k, R_xlen_t *lo, R_xlen_t *hi) {
    *lo = (R_xlen_t)k * st->chunk;
    *hi = st->rows - *lo < st->chunk ? st->rows : *lo + st->chunk;
}

/* Touches every page of the conversions' output buffers first, on two threads. Left to the
 * helper, every other slice of the fst frame took 5 ms instead of 0.3 (a huge page of factor
 * keys faulted in while the encoder's threads map and unmap memory); touched first, all take
 * 1.5 ms. */
typedef struct { conversions *all; int part, parts; } prefault_job;

static void *prefault(void *data) {
    prefault_job *job = data;
    const size_t page = 4096;
    for (size_t i = 0; i < job->all->len; i++) {
        conversion *c = job->all->items[i];
        size_t lens[2] = {(size_t)(c->n / 8) + 1, c->out_len};
        uint8_t *bufs[2] = {c->valid, c->out};
        for (int b = 0; b < 2; b++) {
            if (bufs[b] == NULL) continue;
            volatile uint8_t *p = bufs[b];
            for (size_t at = (size_t)job->part * page; at < lens[b]; at += (size_t)job->parts * page) p[at] = 0;
        }
    }
    return NULL;
}

static void prefault_outputs(conversions *all, int threads) {
    prefault_job jobs[2] = {{all, 0, threads > 1 ? 2 : 1}, {all, 1, 2}};
    pthread_t helper;
    int started = threads > 1 && pthread_create(&helper, NULL, prefault, &jobs[1]) == 0;
    if (!started) jobs[0].parts = 1;
    prefault(&jobs[0]);
    if (started) pthread_join(helper, NULL);
}

/* Converts slice k on `threads` threads and keeps its columns' missing rows. */
static void convert_slice(batch_stream *st, int64_t k, int threads) {
    R_xlen_t lo, hi;
    slice_rows(st, k, &lo, &hi);
    convert_window(st->all, lo, hi, threads);
    for (int64_t j = 0; j < st->ncol; j++) {
        conversion *c = st->of_column[j];
        if (c != NULL) st->nulls[k * st->ncol + j] = (int64_t)(hi - lo) - (int64_t)atomic_load(&c->valid_rows);
    }
}

/* Converts the slices after the first, in order, saying how far it got. */
static void *convert_ahead(void *data) {
    batch_stream *st = data;
    for (int64_t k = 1; k < st->nchunks && !atomic_load(&st->stop); k++) {
        convert_slice(st, k, 1);
        pthread_mutex_lock(&st->lock);
        st->done = k + 1;
        pthread_cond_signal(&st->converted);
        pthread_mutex_unlock(&st->lock);
    }
    return NULL;
}

static void join_helper(batch_stream *st) {
    if (!st->helper_running) return;
    atomic_store(&st->stop, 1);
    pthread_join(st->helper, NULL);
    st->helper_running = 0;
}

static int stream_get_schema(struct ArrowArrayStream *self, struct ArrowSchema *out) {
    batch_stream *st = self->private_data;
    *out = *st->schema;
    out->release = release_lent_schema;
    return 0;
}

static const char *stream_last_error(struct ArrowArrayStream *self) {
    batch_stream *st = self->private_data;
    return st->error[0] ? st->error : NULL;
}

static void stream_release(struct ArrowArrayStream *self) {
    join_helper(self->private_data);
    self->release = NULL;
}

static int stream_get_next(struct ArrowArrayStream *self, struct ArrowArray *out) {
    batch_stream *st = self->private_data;
    int64_t k = st->next;
    if (k >= st->nchunks) {
        memset(out, 0, sizeof *out); /* released: the end */
        return 0;
    }
    R_xlen_t lo, hi;
    slice_rows(st, k, &lo, &hi);
    if (k == 0) {
        if (st->nchunks > 1) prefault_outputs(st->all, st->threads);
        convert_slice(st, 0, st->threads);
        st->done = 1;
        if (st->nchunks > 1 && st->threads > 1)
            st->helper_running = pthread_create(&st->helper, NULL, convert_ahead, st) == 0;
    }
    if (st->helper_running) {
        pthread_mutex_lock(&st->lock);
        while (st->done <= k) pthread_cond_wait(&st->converted, &st->lock);
        pthread_mutex_unlock(&st->lock);
    } else if (st->done <= k) {
        convert_slice(st, k, 1); /* no helper: one thread, or one that could not start */
        st->done = k + 1;
    }
    for (int64_t j = 0; j < st->ncol; j++) {
        conversion *c = st->of_column[j];
        R_xlen_t bad = c != NULL && atomic_load(&c->bad) ? first_bad_code(c, lo, hi) : -1;
        if (bad >= 0) {
            snprintf(st->error, sizeof st->error, "column '%s': factor code %d has no level", c->name,
                     ((const int *)c->in)[bad]);
            return EINVAL;
        }
    }
    struct ArrowArray **cols = &st->column_ptrs[k * st->ncol];
    for (int64_t j = 0; j < st->ncol; j++) {
        struct ArrowArray *base = st->batch->children[j], *a = &st->columns[k * st->ncol + j];
        const void **bufs = &st->column_buffers[(k * st->ncol + j) * 3];
        *a = *base;
        for (int64_t b = 0; b < base->n_buffers && b < 3; b++) bufs[b] = base->buffers[b];
        a->buffers = bufs;
        a->offset = lo;
        a->length = hi - lo;
        a->null_count = -1; /* the consumer counts the bitmap's */
        a->release = release_slice;
        conversion *c = st->of_column[j];
        if (c != NULL) {
            a->null_count = st->nulls[k * st->ncol + j];
            bufs[0] = a->null_count ? c->valid : NULL;
            if (c->op == CONVERT_LOGICAL) bufs[1] = c->out;
        }
        cols[j] = a;
    }
    struct ArrowArray *slice = &st->slices[k];
    memset(slice, 0, sizeof *slice);
    slice->length = hi - lo;
    slice->n_buffers = 1;
    slice->buffers = &st->column_buffers[(size_t)st->nchunks * (size_t)st->ncol * 3]; /* {NULL} */
    slice->n_children = st->ncol;
    slice->children = cols;
    slice->release = release_slice;
    *out = *slice;
    st->next = k + 1;
    return 0;
}

static batch_stream *write_stream; /* the running write's, joined by write_cleanup */

/* Writes the batch through kpk_table_write_stream, when every conversion is of a column of its
 * own (a list column's values are converted before: they are not cut by rows); returns 0 when
 * it does not apply. */
static int stream_write(const char *path, struct ArrowSchema *schema, struct ArrowArray *batch,
                        const kpk_table_options *opts, kpk_status *status) {
    conversions *all = write_conversions;
    int64_t ncol = batch->n_children;
    /* A list column's values are not cut by rows: each slice would carry (and the C API check)
     * all of them. */
    for (int64_t j = 0; j < ncol; j++)
        if (batch->children[j]->n_children > 0) return 0;
    conversion **of_column = (conversion **)big_alloc(((size_t)ncol + 1) * sizeof(conversion *));
    memset(of_column, 0, ((size_t)ncol + 1) * sizeof(conversion *));
    for (size_t i = 0; i < all->len; i++) {
        int64_t j = 0;
        while (j < ncol && batch->children[j] != all->items[i]->array) j++;
        if (j == ncol) return 0;
        of_column[j] = all->items[i];
    }
    R_xlen_t rows = (R_xlen_t)batch->length;
    /* A slice is whole writer rounds (GROUPS_PER_ROUND = 16 row groups in kompakt-table), of
     * at least 2^18 rows: small groups would otherwise make a slice of a few rows, each with
     * its arrays here and its import and checks (a factor's levels among them) in the C API. */
    R_xlen_t round = (R_xlen_t)16 * (opts->rows_per_group ? opts->rows_per_group : 16384);
    R_xlen_t chunk = ((((R_xlen_t)1 << 18) + round - 1) / round) * round;
    int64_t nchunks = rows ? (int64_t)((rows + chunk - 1) / chunk) : 1;
    size_t cells = (size_t)nchunks * (size_t)ncol;
    batch_stream *st = (batch_stream *)big_alloc(sizeof *st);
    memset(st, 0, sizeof *st);
    st->schema = schema;
    st->batch = batch;
    st->all = all;
    st->of_column = of_column;
    st->ncol = ncol;
    st->nchunks = nchunks;
    st->rows = rows;
    st->chunk = chunk;
    st->threads = resolve_threads(opts->threads);
    st->nulls = (int64_t *)big_alloc((cells + 1) * sizeof(int64_t));
    st->slices = (struct ArrowArray *)big_alloc((size_t)nchunks * sizeof(struct ArrowArray));
    st->columns = (struct ArrowArray *)big_alloc((cells + 1) * sizeof(struct ArrowArray));
    st->column_ptrs = (struct ArrowArray **)big_alloc((cells + 1) * sizeof(struct ArrowArray *));
    st->column_buffers = (const void **)big_alloc((cells * 3 + 1) * sizeof(void *));
    st->column_buffers[cells * 3] = NULL;
    /* After the last allocation, which may raise an R error. */
    if (pthread_mutex_init(&st->lock, NULL) != 0) return 0;
    if (pthread_cond_init(&st->converted, NULL) != 0) {
        pthread_mutex_destroy(&st->lock);
        return 0;
    }
    atomic_init(&st->stop, 0);
    struct ArrowArrayStream stream = {stream_get_schema, stream_get_next, stream_last_error, stream_release, st};
    write_stream = st;
    *status = kpk_table_write_stream(path, &stream, opts);
    if (stream.release) stream.release(&stream); /* the C API releases it; this is a guard */
    join_helper(st);
    write_stream = NULL;
    pthread_cond_destroy(&st->converted);
    pthread_mutex_destroy(&st->lock);
    return 1;
}

typedef struct {
    SEXP frame, file, options, append;
    buffers bufs;
    conversions converts;
} write_job;

static SEXP write_body(void *data) {
    write_job *job = data;
    kpk_table_options opts = table_options(job->options); /* checked before any work */
    SEXP columns = kpk_r_field_of(job->frame, "columns", VECSXP, -1);
    R_xlen_t ncol = XLENGTH(columns);
    SEXP kinds = kpk_r_field_of(job->frame, "kinds", INTSXP, ncol);
    SEXP tzones = kpk_r_field_of(job->frame, "tzones", STRSXP, ncol);
    double rows = Rf_asReal(kpk_r_field_of(job->frame, "rows", REALSXP, 1));
    SEXP names = Rf_getAttrib(columns, R_NamesSymbol);
    if (ncol > 0 && TYPEOF(names) != STRSXP) Rf_error("kompakt: internal error: columns without names");
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
    const char *path = copy_text(kpk_r_path(job->file));
    uint64_t appended = 0;
    int append = kpk_r_flag(job->append, "append");
    kpk_status status = KPK_OK;
    if (append || !stream_write(path, schema, batch, &opts, &status)) {
        run_conversions(opts.threads);
        status = append ? kpk_table_append(path, schema, batch, &opts, &appended)
                        : kpk_table_write(path, schema, batch, &opts);
    }
    /* kompakt moved the batch in; the schema stays ours. */
    if (batch->release) batch->release(batch);
    schema->release(schema);
    UNPROTECT(1);
    if (status != KPK_OK) kpk_r_error_about(append ? "cannot append to" : "cannot write", path);
    return Rf_ScalarReal((double)appended);
}

static void write_cleanup(void *data, Rboolean jump) {
    (void)jump;
    write_job *job = data;
    if (write_stream != NULL) join_helper(write_stream);
    write_stream = NULL;
    free(job->converts.items);
    write_conversions = NULL;
    free_buffers(&job->bufs);
    write_buffers = NULL;
}

/* kpk_table_write_c(list(columns (named), kinds, tzones, rows), path, options (table_options),
 * append): the rows appended (0 for a new table). */
SEXP kpk_table_write_c(SEXP frame, SEXP file, SEXP options, SEXP append) {
    write_job *job = (write_job *)R_alloc(1, sizeof(write_job));
    memset(job, 0, sizeof *job);
    job->frame = frame;
    job->file = file;
    job->options = options;
    job->append = append;
    SEXP cont = PROTECT(R_MakeUnwindCont());
    write_buffers = &job->bufs;
    write_conversions = &job->converts;
    SEXP out = R_UnwindProtect(write_body, job, write_cleanup, job, cont);
    UNPROTECT(1);
    return out;
}
