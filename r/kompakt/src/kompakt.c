/* The R package's glue: R's serializer streams into kompakt's C API and back, and the object
 * store.
 *
 * Only the package's C files touch R. The Rust library behind kompakt.h never calls R, so an R
 * error or interrupt (a longjmp) never crosses Rust frames: every call into kompakt returns
 * before R code runs again. R_UnwindProtect makes sure that an R error in the middle of a save
 * or a read still aborts the writer (a file keeps what it held) or closes the reader. */
#include <R.h>
#include <Rinternals.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "glue.h"

/* R's serializer writes a few bytes at a time; gather them before crossing into kompakt. */
#define OUT_BUFFER (64 * 1024) /* below malloc's mmap threshold: tiny values stay cheap */
/* Pieces of at least this size skip the buffer. */
#define DIRECT_WRITE (16 * 1024)
/* Reads refill this much at a time: whole blocks (1 MiB each by default), each decoded once. */
#define IN_BUFFER (8 * 1024 * 1024)
/* Store checks decode values this much at a time. */
#define CHECK_BUFFER (1024 * 1024)

/* ---- saving -------------------------------------------------------------------------------- */

typedef struct {
    kpk_writer *writer;
    uint32_t stream;
    size_t used;
    unsigned char *buffer; /* OUT_BUFFER bytes, from R_alloc: freed by R after the call */
    SEXP object;
    kpk_bytes file;        /* the file, when saving to memory */
    SEXP result;
    SEXP cont;
    int stream_added;
    const kpk_store *store; /* when saving into a store: where, and under which key */
    const char *ns, *key;
    char hash[33];
} save_state;

/* Objects of at most this many serialized bytes get a plain stream: choosing a filter per
 * block costs trial compressions, which only pay on data of some size. */
#define TYPED_MIN (64 * 1024)

/* The stream is added at the first flush, when its size is known to be small (the last flush
 * of an object that fit the buffer) or not. */
static void add_stream(save_state *s, int small) {
    kpk_status status = small ? kpk_writer_add_stream(s->writer, &s->stream)
                              : kpk_writer_add_stream_typed(s->writer, 8, "auto", &s->stream);
    if (status != KPK_OK) kpk_r_error("cannot write");
    s->stream_added = 1;
}

static void flush_out(save_state *s) {
    /* Ctrl-C (and setTimeLimit) stop a long save here: no kompakt call is in progress, and
     * the unwind aborts the writer. */
    R_CheckUserInterrupt();
    if (!s->stream_added) add_stream(s, 0);
    if (s->used > 0 && kpk_writer_write(s->writer, s->stream, s->buffer, s->used) != KPK_OK)
        kpk_r_error("cannot write");
    s->used = 0;
}

static void out_bytes(R_outpstream_t stream, void *data, int length) {
    save_state *s = (save_state *)stream->data;
    size_t n = (size_t)length;
    if (n >= DIRECT_WRITE) {
        /* Large pieces (R writes vectors in 64 KB chunks) go straight in, one copy fewer,
         * after what the buffer holds. */
        flush_out(s); /* checks for an interrupt too */
        if (kpk_writer_write(s->writer, s->stream, data, n) != KPK_OK) kpk_r_error("cannot write");
        return;
    }
    if (s->used + n > OUT_BUFFER) flush_out(s);
    memcpy(s->buffer + s->used, data, n);
    s->used += n;
}

static void out_char(R_outpstream_t stream, int c) {
    unsigned char byte = (unsigned char)c;
    out_bytes(stream, &byte, 1);
}

static SEXP save_body(void *data) {
    save_state *s = (save_state *)data;
    struct R_outpstream_st out;
    R_InitOutPStream(&out, (R_pstream_data_t)s, R_pstream_binary_format, 3, out_char, out_bytes, NULL,
                     R_NilValue);
    R_Serialize(s->object, &out);
    if (!s->stream_added) add_stream(s, s->used <= TYPED_MIN);
    flush_out(s);
    if (kpk_writer_set_metadata(s->writer, KPK_R_OBJECT_META, strlen(KPK_R_OBJECT_META)) != KPK_OK)
        kpk_r_error("cannot write");
    kpk_writer *writer = s->writer;
    s->writer = NULL; /* finish and commit free it, whatever they return */
    if (s->store != NULL) {
        if (kpk_store_commit(s->store, s->ns, s->key, writer, s->hash) != KPK_OK) kpk_r_error("cannot set the key");
        s->result = Rf_mkString(s->hash);
        return R_NilValue;
    }
    if (kpk_writer_finish(writer, &s->file) != KPK_OK) kpk_r_error("cannot complete the file");
    if (s->file.data != NULL || s->file.len > 0) {
        s->result = Rf_allocVector(RAWSXP, (R_xlen_t)s->file.len);
        memcpy(RAW(s->result), s->file.data, s->file.len);
        kpk_bytes_free(&s->file);
    }
    return R_NilValue;
}

static void save_cleanup(void *data, Rboolean jump) {
    save_state *s = (save_state *)data;
    if (jump) {
        kpk_writer_abort(s->writer); /* a file keeps what it held; NULL does nothing */
        s->writer = NULL;
        kpk_bytes_free(&s->file);
    }
}

/* The state of a save, allocated before its writer is opened: R allocations may fail (an R
 * error then, with no writer to leak). Leaves one object protected, released by run_save. */
static save_state *new_save_state(SEXP object, const kpk_store *store, const char *ns, const char *key) {
    save_state *s = (save_state *)R_alloc(1, sizeof(save_state));
    memset(s, 0, sizeof *s);
    s->store = store;
    s->ns = ns;
    s->key = key;
    s->buffer = (unsigned char *)R_alloc(OUT_BUFFER, 1);
    s->object = object;
    s->result = R_NilValue;
    s->cont = PROTECT(R_MakeUnwindCont());
    return s;
}

/* Serializes the object into `writer` (add_stream picks the stream's filters). */
static SEXP run_save(save_state *s, kpk_writer *writer) {
    s->writer = writer;
    R_UnwindProtect(save_body, s, save_cleanup, s, s->cont);
    UNPROTECT(1); /* s->cont */
    return s->result;
}

/* The writer options R passes, list(codec, level, threads), as the C API takes them (every
 * field not set is 0: the default). */
static kpk_write_options write_options_of(SEXP options) {
    kpk_write_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.codec = kpk_r_codec(kpk_r_field(options, "codec"));
    o.level = kpk_r_level(kpk_r_field(options, "level"));
    o.threads = kpk_r_threads(kpk_r_field(options, "threads"));
    o.sync = kpk_r_sync(kpk_r_field(options, "sync"));
    return o;
}

/* kpk_save_c(object, file, list(codec, level, threads)) */
SEXP kpk_save_c(SEXP object, SEXP file, SEXP options) {
    kpk_write_options o = write_options_of(options);
    const char *path = kpk_r_path(file);
    save_state *s = new_save_state(object, NULL, NULL, NULL);
    kpk_writer *writer = NULL;
    if (kpk_writer_open_file(path, &o, &writer) != KPK_OK) kpk_r_error("cannot save");
    run_save(s, writer);
    return R_NilValue;
}

/* kpk_serialize_c(object, list(codec, level, threads)): the file, as a raw vector. */
SEXP kpk_serialize_c(SEXP object, SEXP options) {
    kpk_write_options o = write_options_of(options);
    save_state *s = new_save_state(object, NULL, NULL, NULL);
    kpk_writer *writer = NULL;
    if (kpk_writer_open_memory(&o, &writer) != KPK_OK) kpk_r_error("cannot serialize");
    return run_save(s, writer);
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct {
    kpk_reader *reader;
    uint32_t stream;                /* the stream holding the serialization (the metadata says) */
    uint64_t pos, length;           /* in that stream */
    unsigned char *buffer;          /* from R_alloc at the first read: min(stream, IN_BUFFER) bytes */
    size_t capacity;
    size_t start, end;              /* the buffered bytes not yet read */
    const char *name;               /* for messages */
    SEXP cont;
} read_state;

static void read_into(read_state *s, void *dst, size_t n) {
    size_t got = 0;
    if (kpk_reader_read(s->reader, s->stream, s->pos, dst, n, &got) != KPK_OK) kpk_r_error(s->name);
    if (got != n) Rf_error("kompakt: %s: the serialized object ends early (the file is damaged)", s->name);
    s->pos += n;
}

static void in_bytes(R_inpstream_t stream, void *data, int length) {
    read_state *s = (read_state *)stream->data;
    unsigned char *dst = (unsigned char *)data;
    size_t n = (size_t)length;
    while (n > 0) {
        if (s->start == s->end) {
            uint64_t rest = s->length - s->pos;
            if (rest == 0) Rf_error("kompakt: %s: the serialized object ends early (the file is damaged)", s->name);
            size_t fill = rest < IN_BUFFER ? (size_t)rest : IN_BUFFER;
            if (s->buffer == NULL) {
                /* An R error here (no memory) unwinds through read_cleanup, which closes the reader. */
                s->capacity = fill;
                s->buffer = (unsigned char *)R_alloc(s->capacity, 1);
            }
            if (fill > s->capacity) fill = s->capacity;
            R_CheckUserInterrupt(); /* as for saves: the unwind closes the reader */
            read_into(s, s->buffer, fill);
            s->start = 0;
            s->end = fill;
        }
        size_t take = s->end - s->start < n ? s->end - s->start : n;
        memcpy(dst, s->buffer + s->start, take);
        s->start += take;
        dst += take;
        n -= take;
    }
}

static int in_char(R_inpstream_t stream) {
    unsigned char c;
    in_bytes(stream, &c, 1);
    return c;
}

static SEXP read_body(void *data) {
    read_state *s = (read_state *)data;
    struct R_inpstream_st in;
    R_InitInPStream(&in, (R_pstream_data_t)s, R_pstream_any_format, in_char, in_bytes, NULL, R_NilValue);
    return R_Unserialize(&in);
}

static void read_cleanup(void *data, Rboolean jump) {
    read_state *s = (read_state *)data;
    (void)jump;
    kpk_reader_close(s->reader);
    s->reader = NULL;
}

/* Why a file whose metadata is of `kind` is not an R object this package reads (NULL: it is). */
static const char *not_r_object(kpk_meta_kind kind) {
    switch (kind) {
    case KPK_META_R_OBJECT: return NULL;
    case KPK_META_R_NEWER: return "holds an R object of a newer layout than this kompakt reads: upgrade kompakt";
    case KPK_META_R_DAMAGED: return "says it holds an R object, but its description (metadata) is not valid (the file is damaged)";
    case KPK_META_PYTHON: return "holds a Python object saved by kompakt.save; load it in Python with kompakt.load()";
    case KPK_META_TABLE: return "holds a table, not a saved R object; read it with read_kpk_table()";
    default: return "holds plain data (made by kompakt compress), not a saved R object";
    }
}

/* What the reader's metadata says it holds; `stream` gets the serialization's stream. An R
 * error (the reader closed first) when the metadata cannot be read. */
static kpk_meta_kind reader_kind(kpk_reader *reader, const char *name, uint32_t *stream) {
    const uint8_t *meta = NULL;
    size_t len = 0;
    if (kpk_reader_metadata(reader, &meta, &len) != KPK_OK) {
        char message[2048];
        snprintf(message, sizeof message, "%s", kpk_last_error());
        kpk_reader_close(reader);
        Rf_error("kompakt: %s: %s", name, message);
    }
    return kpk_r_meta_kind(meta, len, stream);
}

/* Checks that the reader holds an R object; closes it and raises an error otherwise. Returns
 * the stream that holds the serialization. */
static uint32_t check_r_object(kpk_reader *reader, const char *name) {
    uint32_t stream = 0;
    const char *why = not_r_object(reader_kind(reader, name, &stream));
    if (why == NULL) return stream;
    kpk_reader_close(reader);
    Rf_error("kompakt: %s %s", name, why);
    return 0; /* not reached */
}

/* The state of a read, allocated before its reader is opened (R_alloc may fail: an R error
 * then, with no reader to leak). */
static read_state *new_read_state(void) {
    read_state *s = (read_state *)R_alloc(1, sizeof(read_state));
    memset(s, 0, sizeof *s);
    s->cont = PROTECT(R_MakeUnwindCont()); /* released by run_read */
    return s; /* the buffer comes with the first read, sized by the stream */
}

/* An untrusted read: the stream is checked (decoded a piece at a time, kompakt-rserial)
 * before R's unserializer sees any of it; closes the reader and raises an error when the
 * check refuses it. */
static void check_untrusted(kpk_reader *reader, uint32_t stream, const char *name) {
    kpk_status status = kpk_reader_check_rserial(reader, stream, 0);
    if (status == KPK_OK) return;
    char message[2048], full[2560];
    snprintf(message, sizeof message, "%s", kpk_last_error());
    kpk_reader_close(reader);
    if (status == KPK_ERROR_REFUSED)
        snprintf(full, sizeof full, "kompakt: %s is not read with trusted = FALSE: %s. Nothing of it was "
                 "unserialized; read files you trust with trusted = TRUE", name, message);
    else
        snprintf(full, sizeof full, "kompakt: %s: %s", name, message);
    kpk_r_stop(status, full);
}

static SEXP run_read(read_state *s, kpk_reader *reader, const char *name, int trusted) {
    uint32_t stream = check_r_object(reader, name);
    s->reader = reader;
    s->name = name;
    s->stream = stream;
    if (stream >= kpk_reader_stream_count(reader) || kpk_reader_stream_length(reader, stream, &s->length) != KPK_OK) {
        kpk_reader_close(reader);
        Rf_error("kompakt: %s: the file has no serialized object (it is damaged)", name);
    }
    if (!trusted) check_untrusted(reader, stream, name);
    SEXP result = R_UnwindProtect(read_body, s, read_cleanup, s, s->cont);
    UNPROTECT(1); /* s->cont; nothing allocates before the caller protects the result */
    return result;
}

/* kpk_read_c(file, list(threads, trusted)) */
SEXP kpk_read_c(SEXP file, SEXP options) {
    int32_t nthreads = kpk_r_threads(kpk_r_field(options, "threads"));
    int trust = kpk_r_flag(kpk_r_field(options, "trusted"), "trusted");
    const char *path = kpk_r_path(file);
    /* The name outlives the reader: messages raised after it is closed still use it. */
    char *name = R_alloc(strlen(path) + 1, 1);
    strcpy(name, path);
    read_state *s = new_read_state();
    kpk_reader *reader = NULL;
    if (kpk_reader_open_file(name, nthreads, &reader) != KPK_OK) kpk_r_error("cannot read");
    return run_read(s, reader, name, trust);
}

/* kpk_unserialize_c(raw, list(threads, trusted)) */
SEXP kpk_unserialize_c(SEXP raw, SEXP options) {
    if (TYPEOF(raw) != RAWSXP) Rf_error("kompakt: kpk_unserialize takes a raw vector (from kpk_serialize)");
    int32_t nthreads = kpk_r_threads(kpk_r_field(options, "threads"));
    int trust = kpk_r_flag(kpk_r_field(options, "trusted"), "trusted");
    read_state *s = new_read_state();
    kpk_reader *reader = NULL;
    /* The raw vector is read where it lies: it is protected by the caller's frame until
     * run_read returns, and the reader is closed before that. */
    if (kpk_reader_open_memory(RAW(raw), (size_t)XLENGTH(raw), nthreads, &reader) != KPK_OK)
        kpk_r_error("cannot read the raw vector");
    return run_read(s, reader, "the raw vector", trust);
}

/* ---- the object store ---------------------------------------------------------------------- */

static void store_finalizer(SEXP ptr) {
    kpk_store *store = (kpk_store *)R_ExternalPtrAddr(ptr);
    kpk_store_close(store);
    R_ClearExternalPtr(ptr);
}

static kpk_store *store_of(SEXP ptr) {
    if (TYPEOF(ptr) != EXTPTRSXP) Rf_error("kompakt: not a kompakt store");
    kpk_store *store = (kpk_store *)R_ExternalPtrAddr(ptr);
    if (store == NULL) Rf_error("kompakt: the store is closed");
    return store;
}

/* A number of a store's options: NULL (not given) is 0, the C API's "the default". Its range
 * is checked by the library, with the messages of every front end. */
static double store_number(SEXP x, const char *what) {
    if (Rf_isNull(x)) return 0;
    if (!Rf_isNumeric(x) || XLENGTH(x) != 1 || ISNAN(Rf_asReal(x)))
        Rf_error("kompakt: %s must be one number", what);
    return Rf_asReal(x);
}

/* kpk_store_open_c(path, list(codec, level, threads, cache_dir, cache_limit, grace,
 * multipart_threshold)) */
SEXP kpk_store_open_c(SEXP path, SEXP options) {
    kpk_store_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.codec = kpk_r_codec(kpk_r_field(options, "codec"));
    o.level = kpk_r_level(kpk_r_field(options, "level"));
    o.threads = kpk_r_threads(kpk_r_field(options, "threads"));
    SEXP cache_dir = kpk_r_field(options, "cache_dir");
    if (!Rf_isNull(cache_dir)) {
        /* A copy: kpk_r_path may return R's one static buffer, which the store's own path
         * below would overwrite. */
        const char *dir = kpk_r_path(cache_dir);
        char *copy = R_alloc(strlen(dir) + 1, 1);
        strcpy(copy, dir);
        o.cache_dir = copy;
    }
    o.cache_limit = store_number(kpk_r_field(options, "cache_limit"), "cache_limit");
    SEXP grace = kpk_r_field(options, "grace");
    if (!Rf_isNull(grace)) {
        double g = store_number(grace, "grace");
        /* R's 0 is "no grace"; the C API's 0 is the default, and -Inf says none. */
        o.grace_seconds = g == 0 ? R_NegInf : g;
    }
    double parts = store_number(kpk_r_field(options, "multipart_threshold"), "multipart_threshold");
    /* In int64_t's range; a negative fraction stays negative (the library refuses it) rather
     * than truncating to 0, the C API's "the default". */
    if (parts >= 9.2e18) parts = 9.2e18;
    o.multipart_threshold = parts < 0 && parts > -1 ? -1 : (int64_t)parts;
    kpk_store *store = NULL;
    if (kpk_store_open_with(kpk_r_path(path), &o, &store) != KPK_OK)
        kpk_r_error("cannot open the store");
    SEXP ptr = PROTECT(R_MakeExternalPtr(store, R_NilValue, R_NilValue));
    R_RegisterCFinalizerEx(ptr, store_finalizer, TRUE);
    UNPROTECT(1);
    return ptr;
}

SEXP kpk_store_close_c(SEXP ptr) {
    if (TYPEOF(ptr) == EXTPTRSXP) store_finalizer(ptr);
    return R_NilValue;
}

SEXP kpk_store_set_c(SEXP ptr, SEXP ns, SEXP key, SEXP value) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace"), *k = kpk_r_string(key, "key");
    save_state *s = new_save_state(value, store, n, k);
    kpk_writer *writer = NULL;
    if (kpk_store_writer(store, &writer) != KPK_OK) kpk_r_error("cannot set the key");
    return run_save(s, writer);
}

/* list(value) when the key exists, NULL when it does not. */
SEXP kpk_store_get_c(SEXP ptr, SEXP ns, SEXP key, SEXP trusted) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace"), *k = kpk_r_string(key, "key");
    int trust = kpk_r_flag(trusted, "trusted");
    size_t len = strlen(k) + strlen(n) + 32;
    char *name = R_alloc(len, 1);
    snprintf(name, len, "key '%s' (namespace '%s')", k, n);
    read_state *s = new_read_state();
    kpk_reader *reader = NULL;
    if (kpk_store_get(store, n, k, &reader) != KPK_OK) kpk_r_error("cannot get the key");
    if (reader == NULL) {
        UNPROTECT(1); /* s->cont */
        return R_NilValue;
    }
    SEXP value = PROTECT(run_read(s, reader, name, trust));
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 1));
    SET_VECTOR_ELT(out, 0, value);
    UNPROTECT(2);
    return out;
}

typedef kpk_status (*key_query)(const kpk_store *, const char *, const char *, int32_t *);

/* `query` for each of `keys`: a logical vector of its answers. */
static SEXP per_key(SEXP ptr, SEXP ns, SEXP keys, key_query query, const char *doing) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace");
    if (!Rf_isString(keys)) Rf_error("kompakt: keys must be strings");
    R_xlen_t count = XLENGTH(keys);
    SEXP out = PROTECT(Rf_allocVector(LGLSXP, count));
    for (R_xlen_t i = 0; i < count; i++) {
        int32_t answer = 0;
        if (STRING_ELT(keys, i) == NA_STRING) Rf_error("kompakt: a key is NA");
        if (query(store, n, Rf_translateCharUTF8(STRING_ELT(keys, i)), &answer) != KPK_OK) kpk_r_error(doing);
        LOGICAL(out)[i] = answer;
    }
    UNPROTECT(1);
    return out;
}

SEXP kpk_store_exists_c(SEXP ptr, SEXP ns, SEXP keys) {
    return per_key(ptr, ns, keys, kpk_store_exists, "cannot look up the key");
}

SEXP kpk_store_del_c(SEXP ptr, SEXP ns, SEXP keys) {
    return per_key(ptr, ns, keys, kpk_store_delete, "cannot delete the key");
}

/* A kompakt string list as a character vector; frees it. */
static SEXP strings_of(kpk_strings *list) {
    SEXP out = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t)list->count));
    for (size_t i = 0; i < list->count; i++) {
        if (list->lens[i] > INT_MAX) {
            kpk_strings_free(list);
            Rf_error("kompakt: a key of over 2 GiB");
        }
        SET_STRING_ELT(out, (R_xlen_t)i, Rf_mkCharLenCE(list->items[i], (int)list->lens[i], CE_UTF8));
    }
    kpk_strings_free(list);
    UNPROTECT(1);
    return out;
}

SEXP kpk_store_keys_c(SEXP ptr, SEXP ns) {
    kpk_store *store = store_of(ptr);
    kpk_strings list = {NULL, NULL, 0};
    if (kpk_store_keys(store, kpk_r_string(ns, "namespace"), &list) != KPK_OK) kpk_r_error("cannot list the keys");
    return strings_of(&list);
}

SEXP kpk_store_namespaces_c(SEXP ptr) {
    kpk_store *store = store_of(ptr);
    kpk_strings list = {NULL, NULL, 0};
    if (kpk_store_namespaces(store, &list) != KPK_OK) kpk_r_error("cannot list the namespaces");
    return strings_of(&list);
}

/* Stores the bytes of `raw` under `key`: as an R object (they are R's serialization, from
 * storr) when `serialized` is TRUE, else as plain data. */
SEXP kpk_store_set_raw_c(SEXP ptr, SEXP ns, SEXP key, SEXP raw, SEXP serialized) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace"), *k = kpk_r_string(key, "key");
    if (TYPEOF(raw) != RAWSXP) Rf_error("kompakt: the value must be a raw vector");
    int as_object = Rf_asLogical(serialized) == TRUE;
    int typed = as_object && XLENGTH(raw) > TYPED_MIN;
    char hash[33];
    /* One call: a small value uses (or helps train) the namespace's zstd dictionary. */
    if (kpk_store_put(store, n, k, RAW(raw), (size_t)XLENGTH(raw), typed ? 8 : 1, typed ? "auto" : NULL,
                      as_object ? KPK_R_OBJECT_META : NULL, as_object ? strlen(KPK_R_OBJECT_META) : 0, hash) != KPK_OK)
        kpk_r_error("cannot set the key");
    return Rf_mkString(hash);
}

typedef struct {
    kpk_reader *reader;
    uint64_t len;
    const char *key;
} raw_read;

static SEXP raw_read_body(void *data) {
    raw_read *r = (raw_read *)data;
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)r->len));
    size_t got = 0;
    if (r->len > 0 && kpk_reader_read(r->reader, 0, 0, RAW(out), (size_t)r->len, &got) != KPK_OK)
        kpk_r_error(r->key);
    UNPROTECT(1);
    return out;
}

static void raw_read_cleanup(void *data, Rboolean jump) {
    raw_read *r = (raw_read *)data;
    (void)jump;
    kpk_reader_close(r->reader);
    r->reader = NULL;
}

/* The bytes of stream 0 under `key` as a raw vector, or NULL when the key does not exist. */
SEXP kpk_store_get_raw_c(SEXP ptr, SEXP ns, SEXP key) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace"), *k = kpk_r_string(key, "key");
    raw_read *r = (raw_read *)R_alloc(1, sizeof(raw_read)); /* before the reader: R_alloc may fail */
    kpk_reader *reader = NULL;
    if (kpk_store_get(store, n, k, &reader) != KPK_OK) kpk_r_error("cannot get the key");
    if (reader == NULL) return R_NilValue;
    r->reader = reader;
    r->len = 0;
    r->key = k;
    if (kpk_reader_stream_count(reader) > 0 && kpk_reader_stream_length(reader, 0, &r->len) != KPK_OK) {
        char message[2048];
        snprintf(message, sizeof message, "%s", kpk_last_error());
        kpk_reader_close(reader);
        Rf_error("kompakt: %s: %s", k, message);
    }
    /* Allocating the vector may fail (an R error): the reader is closed either way. */
    SEXP cont = PROTECT(R_MakeUnwindCont());
    SEXP out = PROTECT(R_UnwindProtect(raw_read_body, r, raw_read_cleanup, r, cont));
    UNPROTECT(2);
    return out;
}

/* Deletes the keys of namespace `ns` (NULL: of all namespaces); how many, as a double. */
SEXP kpk_store_clear_c(SEXP ptr, SEXP ns) {
    kpk_store *store = store_of(ptr);
    const char *n = Rf_isNull(ns) ? NULL : kpk_r_string(ns, "namespace");
    uint64_t removed = 0;
    if (kpk_store_clear(store, n, &removed) != KPK_OK) kpk_r_error("cannot clear the store");
    return Rf_ScalarReal((double)removed);
}

/* Removes unreferenced values: c(objects = , bytes = ) removed. */
SEXP kpk_store_gc_c(SEXP ptr) {
    kpk_store *store = store_of(ptr);
    uint64_t objects = 0, bytes = 0;
    if (kpk_store_gc(store, &objects, &bytes) != KPK_OK) kpk_r_error("cannot collect the store's garbage");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
    REAL(out)[0] = (double)objects;
    REAL(out)[1] = (double)bytes;
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, Rf_mkChar("objects"));
    SET_STRING_ELT(names, 1, Rf_mkChar("bytes"));
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(2);
    return out;
}

/* Whether the value under `key` is a sound R object (1), else (0) what is wrong with it, in
 * `problem`: missing, unreadable, not an R object, or (with `buffer`, a full check) a stream
 * that does not decode or fails a block checksum. Nothing here raises an R error while the
 * reader is open. */
static int check_value(const kpk_store *store, const char *ns, const char *key, unsigned char *buffer,
                       char *problem, size_t cap) {
    kpk_reader *reader = NULL;
    if (kpk_store_get(store, ns, key, &reader) != KPK_OK) {
        snprintf(problem, cap, "%s", kpk_last_error());
        return 0;
    }
    if (reader == NULL) {
        snprintf(problem, cap, "missing (no such key)");
        return 0;
    }
    const uint8_t *meta = NULL;
    size_t len = 0;
    uint32_t stream = 0, streams = kpk_reader_stream_count(reader);
    int ok = kpk_reader_metadata(reader, &meta, &len) == KPK_OK;
    if (!ok) {
        snprintf(problem, cap, "%s", kpk_last_error());
    } else {
        const char *why = not_r_object(kpk_r_meta_kind(meta, len, &stream));
        if (why != NULL) snprintf(problem, cap, "the value %s", why);
        else if (stream >= streams) snprintf(problem, cap, "the value has no serialized object (it is damaged)");
        ok = why == NULL && stream < streams;
    }
    for (uint32_t i = 0; ok && buffer != NULL && i < streams; i++) {
        uint64_t length = 0;
        if (kpk_reader_stream_length(reader, i, &length) != KPK_OK) {
            snprintf(problem, cap, "%s", kpk_last_error());
            ok = 0;
        }
        for (uint64_t pos = 0; ok && pos < length;) {
            size_t want = length - pos < CHECK_BUFFER ? (size_t)(length - pos) : CHECK_BUFFER, got = 0;
            if (kpk_reader_read(reader, i, pos, buffer, want, &got) != KPK_OK) {
                snprintf(problem, cap, "%s", kpk_last_error());
                ok = 0;
            } else if (got != want) {
                snprintf(problem, cap, "stream %u ends early (the value is damaged)", (unsigned)i);
                ok = 0;
            }
            pos += got;
        }
    }
    kpk_reader_close(reader);
    return ok;
}

/* kpk_store_check_c(ptr, namespace, keys, full): for each key, NA when its value is a sound R
 * object, else what is wrong with it (check_value). `full`: decode every block (each checksum
 * verified), else only open each value and read its description. */
SEXP kpk_store_check_c(SEXP ptr, SEXP ns, SEXP keys, SEXP full) {
    kpk_store *store = store_of(ptr);
    const char *n = kpk_r_string(ns, "namespace");
    int whole = kpk_r_flag(full, "full");
    if (!Rf_isString(keys)) Rf_error("kompakt: keys must be strings");
    R_xlen_t count = XLENGTH(keys);
    SEXP out = PROTECT(Rf_allocVector(STRSXP, count));
    unsigned char *buffer = whole ? (unsigned char *)R_alloc(CHECK_BUFFER, 1) : NULL;
    char problem[2048];
    for (R_xlen_t i = 0; i < count; i++) {
        R_CheckUserInterrupt(); /* between values: no reader is open */
        if (STRING_ELT(keys, i) == NA_STRING) Rf_error("kompakt: a key is NA");
        const void *vmax = vmaxget();
        const char *key = Rf_translateCharUTF8(STRING_ELT(keys, i));
        int sound = check_value(store, n, key, buffer, problem, sizeof problem);
        vmaxset(vmax);
        SET_STRING_ELT(out, i, sound ? NA_STRING : Rf_mkCharCE(problem, CE_UTF8));
    }
    UNPROTECT(1);
    return out;
}

SEXP kpk_version_c(void) { return Rf_mkString(kpk_version()); }

/* Whether the R serialization in a raw vector may be unserialized from an untrusted source:
 * NULL if it may, else the reason (a string). */
SEXP kpk_rserial_check_c(SEXP raw) {
    if (TYPEOF(raw) != RAWSXP) Rf_error("kompakt: the serialization to check must be a raw vector");
    if (kpk_rserial_check(RAW(raw), (size_t)XLENGTH(raw), 0) == KPK_OK) return R_NilValue;
    return Rf_mkString(kpk_last_error());
}
