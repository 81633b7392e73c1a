/*
 * kompakt.h: the C API of kompakt (compressed, checksummed, multi-threaded block-stream files).
 *
 * Libraries (crates/kompakt-c; crates/kompakt-c/install.sh PREFIX installs them with this
 * header and a pkg-config file, kompakt.pc):
 *   libkompakt_c.a       static: link it with -lpthread -ldl -lm (pkg-config --static --libs kompakt)
 *   libkompakt_c.so.2    shared: its SONAME carries the API version (pkg-config --libs kompakt),
 *                        and it may be opened with dlopen(): every function below is a symbol.
 *
 * Versions. KPK_API_VERSION counts the changes that break callers: a function whose signature
 * or meaning changes, a struct whose layout changes. A program built with this header needs a
 * library whose kpk_api_version() returns the same number (check it at start-up, above all
 * when loading the library with dlopen); the shared library's file name and SONAME end in it.
 * New functions, new status codes and new fields at the end of a sized struct (below) do not
 * change it: treat a status you do not know as an error (kpk_status_name says "unknown").
 * API version 2 (kompakt 0.1): the options structs below replaced the (codec, level, threads)
 * arguments of the writer and store open functions, level 0 became the default everywhere,
 * store lists became kpk_strings, and kpk_api_version, kpk_status_name, kpk_reader_file_kind
 * and the statuses KPK_ERROR_DICTIONARY and KPK_ERROR_LIMIT were added.
 *
 * Options structs (kpk_write_options, kpk_table_options, kpk_store_options) are safe when
 * zero-initialized: 0 (or NULL) in any field means "the default", and a NULL pointer to the
 * struct means every default.
 * Their first field, `size`, lets them grow without breaking callers: set it to sizeof the
 * struct (`kpk_write_options o = {.size = sizeof o};`), or leave it 0 (`= {0}`, memset), which
 * means the struct as API version 2 defined it. A library given a struct from a newer header
 * takes it as long as the fields it does not know are zero, and refuses it otherwise
 * (KPK_ERROR_OPTION); a size no version has is KPK_ERROR_USAGE.
 *
 * Rules that hold for every function:
 *
 * - Errors. Functions that can fail return a kpk_status: KPK_OK (0) or an error code. The
 *   message of the calling thread's last error is kpk_last_error(): UTF-8, naming the file and
 *   the valid choices where there are any, valid until the next call into kompakt on that
 *   thread. Nothing ever unwinds across this API and nothing aborts the process on bad input: a
 *   damaged or hostile file is KPK_ERROR_CORRUPT, a bug inside kompakt KPK_ERROR_INTERNAL.
 *   The codes are the error kinds every front end shares (the command line's, Python's and R's
 *   errors have the same kinds and messages for the same mistakes).
 * - Ownership. A kpk_writer is freed by kpk_writer_finish or kpk_store_commit (whatever they
 *   return) or by kpk_writer_abort; a kpk_reader by kpk_reader_close; a kpk_store by
 *   kpk_store_close; a kpk_table by kpk_table_close; kpk_bytes by kpk_bytes_free; kpk_strings
 *   by kpk_strings_free. Pointers the caller passes in are borrowed for the call only, except
 *   the memory given to kpk_reader_open_memory and kpk_table_open_memory, which must stay
 *   valid and unchanged until the handle is closed.
 * - Threads. A handle may be used from any thread, by one thread at a time (a kpk_store by
 *   several at once). Work inside a call runs on `threads` threads (0: all cores, at most
 *   256); output bytes never depend on the thread count.
 * - Null. Passing NULL where a handle or an output pointer is required is KPK_ERROR_USAGE.
 */
#ifndef KOMPAKT_H
#define KOMPAKT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API version this header declares; kpk_api_version() is the library's. */
#define KPK_API_VERSION 2
uint32_t kpk_api_version(void);
/* kompakt's version, such as "0.1.0". */
const char *kpk_version(void);

/* ---- statuses ------------------------------------------------------------------------------
 * One per kind of error (kompakt::ErrorKind, in its order). */
typedef int32_t kpk_status;
#define KPK_OK 0
#define KPK_ERROR_IO 1         /* the operating system or a server refused (a missing file, a full disk) */
#define KPK_ERROR_CORRUPT 2    /* not a kompakt file, damaged or truncated */
#define KPK_ERROR_OPTION 3     /* an option or a range is not valid; the message names the valid ones */
#define KPK_ERROR_USAGE 4      /* a call the object does not allow now (a NULL handle, a finished stream) */
#define KPK_ERROR_INTERNAL 5   /* a bug in kompakt; the handle involved must not be used again */
#define KPK_ERROR_STORE 6      /* a folder that is not a store, or a store that refused (its index) */
#define KPK_ERROR_REFUSED 7    /* the data holds what the call refuses to pass on (R code, in an untrusted read) */
#define KPK_ERROR_DICTIONARY 8 /* the data needs a zstd dictionary that was not given (a store's value read alone) */
#define KPK_ERROR_LIMIT 9      /* a read would allocate more than its limit, or than this machine has */

/* The message of this thread's last error ("" if none). */
const char *kpk_last_error(void);
/* The status of this thread's last error (KPK_OK if none), for a binding that raises its error
 * after other calls (added in API version 2, after its first release). */
kpk_status kpk_last_status(void);
/* A status's name, static: "ok", "io", "corrupt", "option", "usage", "internal", "store",
 * "refused", "dictionary", "limit" (the error kinds' names in every front end); "unknown" for
 * any other number. */
const char *kpk_status_name(kpk_status status);

/* ---- memory kompakt hands over -------------------------------------------------------------- */

/* Bytes made by kompakt, owned by the caller once returned; free with kpk_bytes_free (which
 * empties the struct: a second free does nothing). */
typedef struct {
    uint8_t *data;
    size_t len;
} kpk_bytes;
void kpk_bytes_free(kpk_bytes *bytes);

/* Strings made by kompakt: `count` items, item i UTF-8 of lens[i] bytes followed by a NUL
 * (items and lens are NULL when count is 0). Owned by the caller once returned; free with
 * kpk_strings_free (which empties the struct). */
typedef struct {
    char **items;
    size_t *lens;
    size_t count;
} kpk_strings;
void kpk_strings_free(kpk_strings *list);

/* ---- writing ------------------------------------------------------------------------------
 * codec and level mean what they mean in the command line and in Python: neither given is the
 * default (unified level 21, zstd level 1); a level alone is a unified level 1-100; a codec
 * alone is a spec ("lz4", "zstd:3", "60", "auto", "none"); a bare codec name and a level is
 * that codec's own level. The level 0 (raw storage) is spelled KPK_LEVEL_NONE, as 0 means
 * "not given"; a codec's own level 0 is written in the spec ("gzip:0"). */
#define KPK_LEVEL_DEFAULT 0
#define KPK_LEVEL_NONE INT32_MAX

/* How a file is written; zero-initialize it (see "Options structs" above) and set what you
 * need. Every value is checked when the writer opens, with the messages of every front end. */
typedef struct {
    uint32_t size;       /* sizeof(kpk_write_options), or 0 */
    int32_t level;       /* 0: the default; KPK_LEVEL_NONE: raw; see above */
    int32_t threads;     /* compression threads; 0: all cores */
    uint32_t typesize;   /* element size of the streams kpk_writer_add_stream adds, 1-255; 0: 1 */
    int64_t block_size;  /* raw bytes per block, 65536 (64 KiB) to 67108864 (64 MiB); 0: 1 MiB */
    const char *codec;   /* a codec spec, see above; NULL: the default */
    const char *filter;  /* those streams' filter: "none", "shuffle", "delta", "auto"; NULL: shuffle
                            when typesize is above 1 */
    const char *sync;    /* a file at a path: "always" (fsync it and its folder) or "none" (renamed
                            into place, no fsync); NULL: $KOMPAKT_SYNC, else "none". Either way a
                            crash of the process never leaves a torn file (docs/GUIDE.md,
                            "Durability"). Added after API version 2's first release. */
} kpk_write_options;

typedef struct kpk_writer kpk_writer;

/* A file at `path` (UTF-8), written atomically: nothing appears there before kpk_writer_finish
 * succeeds, and an abort or a failure leaves what the path held before. `opts` may be NULL. */
kpk_status kpk_writer_open_file(const char *path, const kpk_write_options *opts, kpk_writer **out);
/* A file built in memory, returned by kpk_writer_finish. `opts` may be NULL. */
kpk_status kpk_writer_open_memory(const kpk_write_options *opts, kpk_writer **out);
/* A new stream, with the writer's options; its id (0, 1, ...) goes to *stream. */
kpk_status kpk_writer_add_stream(kpk_writer *writer, uint32_t *stream);
/* A new stream of elements of `typesize` bytes (1-255), with `filter` "none", "shuffle",
 * "delta" or "auto" (per block); NULL: byte shuffle when typesize is above 1. */
kpk_status kpk_writer_add_stream_typed(kpk_writer *writer, uint32_t typesize, const char *filter,
                                       uint32_t *stream);
kpk_status kpk_writer_write(kpk_writer *writer, uint32_t stream, const void *data, size_t len);
/* Bytes stored in the footer (at most 256 MiB); the last call wins. */
kpk_status kpk_writer_set_metadata(kpk_writer *writer, const void *data, size_t len);
/* Completes the file and frees the writer. A memory writer's file goes to *file (which may
 * be NULL only for a file writer). */
kpk_status kpk_writer_finish(kpk_writer *writer, kpk_bytes *file);
/* Discards the file and frees the writer (NULL does nothing). */
void kpk_writer_abort(kpk_writer *writer);

/* ---- reading ------------------------------------------------------------------------------
 * Every block's checksum is verified before it is decoded. */
typedef struct kpk_reader kpk_reader;

/* `path`: a file, or a URL (s3://bucket/key, https://...) read by byte ranges, with credentials
 * and endpoint from the AWS environment variables (AWS_ENDPOINT_URL, ...). A URL of another
 * scheme is KPK_ERROR_OPTION; the writers and kpk_table_write/append refuse URLs (KPK_ERROR_USAGE). */
kpk_status kpk_reader_open_file(const char *path, int32_t threads, kpk_reader **out);
/* A file in memory, read where it lies: `data` must stay valid and unchanged until
 * kpk_reader_close. */
kpk_status kpk_reader_open_memory(const void *data, size_t len, int32_t threads, kpk_reader **out);
uint32_t kpk_reader_stream_count(const kpk_reader *reader);
kpk_status kpk_reader_stream_length(const kpk_reader *reader, uint32_t stream, uint64_t *len);
/* The footer's metadata, borrowed: valid until kpk_reader_close. */
kpk_status kpk_reader_metadata(const kpk_reader *reader, const uint8_t **data, size_t *len);
/* What a file holds, told by its metadata as every front end tells it (object descriptions are
 * JSON, read as JSON). A file of a kind a later version adds is KPK_FILE_PLAIN here. */
typedef int32_t kpk_file_kind;
#define KPK_FILE_PLAIN 0         /* streams of bytes, with metadata that names no layout (or none) */
#define KPK_FILE_TABLE 1         /* a table file: read it with kpk_table_open_* */
#define KPK_FILE_PYTHON_OBJECT 2 /* an object saved by the Python package (kompakt.save) */
#define KPK_FILE_R_OBJECT 3      /* an object saved by the R package (kpk_save) */
kpk_status kpk_reader_file_kind(const kpk_reader *reader, kpk_file_kind *kind);
/* Decodes up to `len` bytes of `stream` from position `pos` into `buffer`, decoding only the
 * blocks that cover them; the count goes to *read (less than `len` only at the stream's end). */
kpk_status kpk_reader_read(kpk_reader *reader, uint32_t stream, uint64_t pos, void *buffer, size_t len,
                           size_t *read);
void kpk_reader_close(kpk_reader *reader);

/* ---- the object store ---------------------------------------------------------------------
 * A content-addressed store in a folder, the same folders as Python's kompakt.Store and the
 * `kompakt store` commands: values are kompakt files stored once per content hash; keys (any
 * UTF-8 text without NUL, in namespaces such as "objects") point at them. Many processes may
 * use one store; every commit is atomic and the last writer of a key wins. A store handle may
 * be used by several threads at once.
 * The same store may live on object storage, at an s3://bucket/prefix URL (the layout of
 * Python's kompakt.Store(url)): values are built and cached in a local folder under
 * $XDG_CACHE_HOME/kompakt/remote (else ~/.cache), at most 10 GiB of it, and every machine
 * sees the others' keys. */
typedef struct kpk_store kpk_store;

/* Opens the store in folder (or at URL) `path`, creating it when missing. `opts` (may be NULL):
 * codec and level, the codec recorded for a new store (neither given: the library's default,
 * or the store's own), an existing store opened with another being KPK_ERROR_STORE; threads.
 * A store's values take its own block size, element size and filter: those fields stay 0 here
 * (a value's element size and filter go to kpk_store_put or kpk_writer_add_stream_typed). */
kpk_status kpk_store_open(const char *path, const kpk_write_options *opts, kpk_store **out);

/* How kpk_store_open_with opens a store; zero-initialized, every default (the `size` field as in
 * kpk_write_options). The cache_* fields, grace_seconds and multipart_threshold are options of
 * stores on object storage: given for a folder, they are KPK_ERROR_OPTION. */
typedef struct {
    uint32_t size;               /* sizeof(kpk_store_options), or 0 */
    int32_t level;               /* as kpk_write_options: 0 the default */
    int32_t threads;             /* threads for large values; 0: all cores */
    int32_t durable;             /* nonzero: fsync every index commit (default: a crash of the
                                    process loses nothing, a power loss may undo the last commits) */
    int32_t must_exist;          /* nonzero: KPK_ERROR_STORE when `path` holds no store (default:
                                    create one) */
    const char *codec;           /* a codec spec; NULL: the default (the store's own, for an
                                    existing store) */
    const char *cache_dir;       /* the local cache folder; NULL: one per URL under
                                    $XDG_CACHE_HOME/kompakt/remote (else ~/.cache) */
    double cache_limit;          /* bytes the cache's objects may hold; 0: 10 GiB; INFINITY (from
                                    math.h): no limit */
    double grace_seconds;        /* how long gc keeps objects no key points at; 0: an hour;
                                    -INFINITY: not at all */
    int64_t multipart_threshold; /* objects of at least this many bytes upload in parts; 0: 128 MiB */
} kpk_store_options;

/* Opens the store at `path` (a folder or an s3:// URL) with `opts` (may be NULL: every default,
 * as kpk_store_open with NULL). */
kpk_status kpk_store_open_with(const char *path, const kpk_store_options *opts, kpk_store **out);
void kpk_store_close(kpk_store *store);
/* A writer for a new value (add streams, write, set metadata), hashed as it is written;
 * complete it with kpk_store_commit, or discard it with kpk_writer_abort. */
kpk_status kpk_store_writer(const kpk_store *store, kpk_writer **out);
/* Completes `writer` (freed by this call, whatever it returns) and points `key` at its value;
 * the content hash (32 hex digits and a NUL) goes to `hash` unless it is NULL. */
kpk_status kpk_store_commit(const kpk_store *store, const char *ns, const char *key, kpk_writer *writer,
                            char *hash);
/* Stores `len` bytes at `data` as a one-stream value under `key` in one call (elements of
 * `typesize` bytes, `filter` as for kpk_writer_add_stream_typed; `metadata` may be NULL when
 * `metadata_len` is 0); the content hash goes to `hash` unless it is NULL. A small value
 * (at most 64 KiB) is compressed with its namespace's zstd dictionary, or helps the store
 * train one (values from kpk_store_writer never do). */
kpk_status kpk_store_put(const kpk_store *store, const char *ns, const char *key, const void *data, size_t len,
                         uint32_t typesize, const char *filter, const void *metadata, size_t metadata_len,
                         char *hash);
/* The value under `key`, open for reading; *out is NULL (and the status KPK_OK) when the key
 * does not exist. */
kpk_status kpk_store_get(const kpk_store *store, const char *ns, const char *key, kpk_reader **out);
kpk_status kpk_store_exists(const kpk_store *store, const char *ns, const char *key, int32_t *exists);
/* *deleted (unless NULL) says whether the key existed. */
kpk_status kpk_store_delete(const kpk_store *store, const char *ns, const char *key, int32_t *deleted);
/* The keys of namespace `ns`, and the namespaces that hold keys: sorted lists, freed with
 * kpk_strings_free. */
kpk_status kpk_store_keys(const kpk_store *store, const char *ns, kpk_strings *keys);
kpk_status kpk_store_namespaces(const kpk_store *store, kpk_strings *namespaces);
/* Deletes every key of namespace `ns` (NULL: of all namespaces); *removed (unless NULL) gets how
 * many. Their values stay until kpk_store_gc. */
kpk_status kpk_store_clear(const kpk_store *store, const char *ns, uint64_t *removed);
/* Removes the values no key points at (on object storage, only those older than the grace
 * period, so a value another machine is committing stays); *objects and *bytes (unless NULL)
 * get what was removed. */
kpk_status kpk_store_gc(const kpk_store *store, uint64_t *objects, uint64_t *bytes);

/* ---- tables -------------------------------------------------------------------------------
 * Table files (the same files as Python's kompakt.write_table): columns cross this API as
 * Arrow's C data interface, the ABI shared by every Arrow implementation. A batch to write is
 * a struct array whose children are the columns; it is moved into the call (released by
 * kompakt whatever the call returns) and checked (offsets, UTF-8, dictionary keys) before it
 * is used. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};
#endif /* ARROW_C_STREAM_INTERFACE */

typedef struct kpk_table kpk_table;

/* How a table is written; zero-initialize it (see "Options structs" above) and set what you
 * need. codec and level as for kpk_write_options; neither given: the table's own defaults
 * (zstd:2; text zstd:3, plain strings LZ4 where zstd saves under a fifth); a codec
 * or level named is used for every page, and
 * KPK_LEVEL_NONE stores every page raw. string_codec (NULL: as just said) names the codec of
 * the pages of plain string and binary columns, whatever the rest take. Sort columns are
 * checked row by row as they are written. */
typedef struct {
    uint32_t size;                     /* sizeof(kpk_table_options), or 0 */
    int32_t level;                     /* 0: the default; KPK_LEVEL_NONE: raw pages */
    const char *codec;                 /* NULL: the table's defaults */
    const char *string_codec;          /* e.g. "zstd:2"; NULL: as codec says */
    int32_t threads;                   /* 0: all cores */
    uint32_t rows_per_group;           /* 1 to 16777216; 0: the default, 16384 (a table of up to 32768 rows and 8 MiB: one group) */
    const char *const *sort_columns;   /* most significant first */
    const uint8_t *sort_descending;    /* per sort column, nonzero = descending */
    const uint8_t *sort_nulls_first;   /* per sort column, nonzero = nulls first */
    size_t n_sort;
    const char *const *metadata_keys;  /* user key-value metadata stored with the table */
    const char *const *metadata_values;
    size_t n_metadata;
    const char *sync;                  /* "always" or "none", as kpk_write_options.sync; NULL:
                                          the default. Added after API version 2's first release. */
} kpk_table_options;

/* Writes a table file at `path` atomically from one record batch; `opts` may be NULL. */
kpk_status kpk_table_write(const char *path, struct ArrowSchema *schema, struct ArrowArray *batch,
                           const kpk_table_options *opts);
/* Writes a table file at `path` atomically from the batches of an Arrow C stream (a struct of
 * the columns each), moved in: released whatever the result. Each batch is imported and
 * checked as get_next gives it, and every complete round of 16 row groups is encoded before
 * the next batch is asked for, so a producer that prepares the next batch meanwhile (batches
 * of 16 * rows_per_group rows or a multiple) overlaps the two; the file's bytes are those of
 * one batch of all the rows. A get_next that fails fails the write with KPK_ERROR_OPTION, its
 * get_last_error the message; a batch whose columns are not the schema's is KPK_ERROR_OPTION. */
kpk_status kpk_table_write_stream(const char *path, struct ArrowArrayStream *stream, const kpk_table_options *opts);
/* Appends a record batch (of the table's schema) in place; an interrupted append is undone at
 * the next open. `rows` (may be NULL) gets the rows appended. The table's sort keys and rows
 * per group are kept; `opts` gives the codec, threads and metadata to merge. */
kpk_status kpk_table_append(const char *path, struct ArrowSchema *schema, struct ArrowArray *batch,
                            const kpk_table_options *opts, uint64_t *rows);

/* Opens a table file (or URL, as kpk_reader_open_file: only the pages read are fetched), or one
 * held in memory (which must stay valid and unchanged until kpk_table_close). `threads`:
 * decoding threads of the reads (0: all cores). A read that would allocate more than the
 * table's read limit (256 times the file's size, at least 1 GiB: a hostile file cannot make
 * it allocate what its size does not justify) is KPK_ERROR_LIMIT. */
kpk_status kpk_table_open_file(const char *path, int32_t threads, kpk_table **out);
kpk_status kpk_table_open_memory(const void *data, size_t len, int32_t threads, kpk_table **out);
void kpk_table_close(kpk_table *table);
uint64_t kpk_table_num_rows(const kpk_table *table);
uint32_t kpk_table_rows_per_group(const kpk_table *table);
uint64_t kpk_table_file_size(const kpk_table *table);
/* A fingerprint of the table's index (its footer's checksum; 0 for NULL): two opens of an
 * unchanged file give the same value, and any write to the file changes it. For caching what a
 * front end derives from the schema and metadata. */
uint64_t kpk_table_fingerprint(const kpk_table *table);
/* The schema (a struct of the columns), exported into `out`; the caller releases it. */
kpk_status kpk_table_schema(const kpk_table *table, struct ArrowSchema *out);
/* A value of the user metadata, copied into `value`; *found is 0 (and value empty) if absent. */
kpk_status kpk_table_metadata(const kpk_table *table, const char *key, kpk_bytes *value, int32_t *found);
size_t kpk_table_sort_key_count(const kpk_table *table);
kpk_status kpk_table_sort_key(const kpk_table *table, size_t i, kpk_bytes *column, int32_t *descending,
                              int32_t *nulls_first);
uint32_t kpk_table_num_columns(const kpk_table *table);
/* Bytes each column takes in the file (stored) and once decompressed (encoded), from the index:
 * ncolumns (= kpk_table_num_columns) values into each array. */
kpk_status kpk_table_column_sizes(const kpk_table *table, uint64_t *stored, uint64_t *encoded, size_t ncolumns);
/* Decodes rows [from, to) of a fixed-width column (numbers, dates, times, durations; not
 * booleans or dictionaries) straight into `dst` (dst_len = rows x the type's width). *has_nulls
 * says whether some rows are null; then `validity` (if not NULL; (to - from + 7) / 8 bytes) gets
 * one bit per row, least significant first, set = valid. Values of null rows are unspecified. */
kpk_status kpk_table_read_into(const kpk_table *table, uint32_t column, uint64_t from, uint64_t to,
                               void *dst, size_t dst_len, uint8_t *validity, int32_t *has_nulls);
/* Hints that rows [from, to) of `columns` (NULL: all) are about to be read in several calls (a
 * column at a time, in chunks): a table at a URL fetches their pages at once, in the
 * background. Files and memory ignore it. */
kpk_status kpk_table_prefetch(const kpk_table *table, const uint32_t *columns, size_t ncolumns, uint64_t from,
                              uint64_t to);
/* Reads rows [from, to) of `columns` (positions; NULL: all) as one struct array of the columns,
 * exported into `schema` and `array`; the caller releases both. Only the pages covering the
 * rows are read, on all the table's threads. */
kpk_status kpk_table_read(const kpk_table *table, const uint32_t *columns, size_t ncolumns, uint64_t from,
                          uint64_t to, struct ArrowSchema *schema, struct ArrowArray *array);
/* Rows at the `nrows` positions `rows` (in that order, repeats allowed) of a fixed-width
 * column, as kpk_table_read_into reads a range: dst_len = nrows x the type's width; validity
 * (if not NULL) (nrows + 7) / 8 bytes. Each row group holding any of them is decoded once. */
kpk_status kpk_table_take_into(const kpk_table *table, uint32_t column, const uint64_t *rows, size_t nrows,
                               void *dst, size_t dst_len, uint8_t *validity, int32_t *has_nulls);
/* Rows at the `nrows` positions `rows` (in that order, repeats allowed) of `columns`
 * (positions; NULL: all), as one struct array exported into `schema` and `array`, as
 * kpk_table_read does for a range. */
kpk_status kpk_table_take(const kpk_table *table, const uint32_t *columns, size_t ncolumns, const uint64_t *rows,
                          size_t nrows, struct ArrowSchema *schema, struct ArrowArray *array);

/* One filter of a filtered read: the rows where `column op values` holds. `op` is one of "==" (or
 * "="), "!=", "<", "<=", ">", ">=" (one value), "in", "not in" (a list of any length). The values
 * are an Arrow array of the column's type (for a dictionary column, its value type or the
 * dictionary type; a timestamp may carry another time zone): `values_schema` is read and left to
 * the caller, `values` is moved into the call (released by kompakt whatever the call returns, as
 * the batches of kpk_table_write are). Rows compare as pyarrow's filters compare them: a null
 * row passes no comparison (nor "!="), NaN is neither less than, equal to nor greater than
 * anything, -0.0 equals 0.0; a null in an "in" list matches the null rows, and "not in" passes
 * what "in" does not. Not a sized struct: an array of them is passed with its count. */
typedef struct {
    const char *column;                /* the column's name, UTF-8 */
    const char *op;                    /* see above */
    struct ArrowSchema *values_schema; /* the values' type (borrowed) */
    struct ArrowArray *values;         /* the values (moved in) */
} kpk_filter;
/* Reads the rows of [from, to) that pass every one of the `nfilters` filters (0: every row) of
 * `columns` (positions; NULL: all), in table order, as one struct array of the columns exported
 * into `schema` and `array` (the caller releases both), as kpk_table_read does for a range. The
 * filters' columns need not be among `columns`. Only the rows that can pass are read: a filter
 * on the table's first sort key (ascending) narrows the rows by binary search, and the row
 * groups whose statistics rule a filter out are skipped. An unknown column, an op not listed
 * above, values of another type, or a count of values an op does not take is KPK_ERROR_OPTION,
 * the message naming what is valid (as the command line's `head --where` and Python's filters
 * say it); a NULL string or values is KPK_ERROR_USAGE. */
kpk_status kpk_table_read_where(const kpk_table *table, const uint32_t *columns, size_t ncolumns, uint64_t from,
                                uint64_t to, const kpk_filter *filters, size_t nfilters, struct ArrowSchema *schema,
                                struct ArrowArray *array);

/* ---- R serialization checks -----------------------------------------------------------------
 * Whether an R serialization stream (serialize()/saveRDS()/kpk_save bytes; formats 2 and 3,
 * XDR, native binary or ascii) may be handed to R's unserializer when it comes from anywhere:
 * KPK_OK if it may; KPK_ERROR_REFUSED (the message names what) if it holds code or what loads
 * code (promises, closures, byte code, built-in functions, `...`, active bindings, package
 * namespaces and environments, persistent references, ALTREP classes other than base R's
 * own), an environment (unless allowed), an external pointer or weak reference (unless
 * allowed); KPK_ERROR_CORRUPT if it is damaged, truncated, nests deeper than 10000 levels or
 * is shaped as R never writes it. Calls and formulas pass: unserializing builds them without
 * evaluating them. `allow`: 0, or KPK_RSERIAL_ENVIRONMENTS | KPK_RSERIAL_EXTERNAL_POINTERS.
 * The check reads no further than the end of the stream's value, and its memory stays in
 * proportion to what it has read. */
#define KPK_RSERIAL_ENVIRONMENTS 1
#define KPK_RSERIAL_EXTERNAL_POINTERS 2
/* Checks the stream in `len` bytes at `data`. */
kpk_status kpk_rserial_check(const void *data, size_t len, uint32_t allow);
/* Checks the stream held in `stream` of a reader's file, decoding it 1 MiB at a time (read it
 * again for R afterwards: its blocks are decoded twice, and it is never held whole). The
 * message names what the check found, not the file. */
kpk_status kpk_reader_check_rserial(kpk_reader *reader, uint32_t stream, uint32_t allow);

#ifdef __cplusplus
}
#endif
#endif /* KOMPAKT_H */
