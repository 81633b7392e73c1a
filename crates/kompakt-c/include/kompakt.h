/*
 * kompakt.h: the C API of kompakt (compressed, checksummed, multi-threaded block-stream files).
 *
 * Link with the static library the crate `kompakt-c` builds (libkompakt_c.a) and, on Linux,
 * -lpthread -ldl -lm.
 *
 * Rules that hold for every function:
 *
 * - Errors. Functions that can fail return a kpk_status: KPK_OK (0) or an error code. The
 *   message of the calling thread's last error is kpk_last_error(): UTF-8, naming the file and
 *   the valid choices where there are any, valid until the next call into kompakt on that
 *   thread. Nothing ever unwinds across this API and nothing aborts the process on bad input: a
 *   damaged or hostile file is KPK_ERROR_CORRUPT, a bug inside kompakt KPK_ERROR_INTERNAL.
 * - Ownership. A kpk_writer is freed by kpk_writer_finish or kpk_store_commit (whatever they
 *   return) or by kpk_writer_abort; a kpk_reader by kpk_reader_close; a kpk_store by
 *   kpk_store_close; kpk_bytes by kpk_bytes_free. Pointers
 *   the caller passes in are borrowed for the call only, except the memory given to
 *   kpk_reader_open_memory, which must stay valid and unchanged until kpk_reader_close.
 * - Threads. A handle may be used from any thread, by one thread at a time. Work inside a call
 *   runs on `threads` threads (0: all cores); output bytes never depend on the thread count.
 * - Null. Passing NULL where a handle or an output pointer is required is KPK_ERROR_USAGE.
 */
#ifndef KOMPAKT_H
#define KOMPAKT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KPK_API_VERSION 1

typedef int32_t kpk_status;
#define KPK_OK 0
#define KPK_ERROR_IO 1       /* the operating system refused (a missing file, a full disk, ...) */
#define KPK_ERROR_CORRUPT 2  /* not a kompakt file, damaged or truncated */
#define KPK_ERROR_OPTION 3   /* an option or a range is not valid; the message names the valid ones */
#define KPK_ERROR_USAGE 4    /* a call the object does not allow now (a NULL handle, a finished stream) */
#define KPK_ERROR_INTERNAL 5 /* a bug in kompakt; the handle involved must not be used again */
#define KPK_ERROR_STORE 6    /* a folder that is not a store, or a store that refused (its index) */

/* `level` when no level is given: the codec's default, or the default codec (zstd:1). */
#define KPK_LEVEL_DEFAULT INT32_MIN

/* The message of this thread's last error ("" if none). */
const char *kpk_last_error(void);
/* kompakt's version, such as "0.1.0". */
const char *kpk_version(void);

/* Bytes made by kompakt, owned by the caller once returned; free with kpk_bytes_free. */
typedef struct {
    uint8_t *data;
    size_t len;
} kpk_bytes;
void kpk_bytes_free(kpk_bytes *bytes);

/* ---- writing ------------------------------------------------------------------------------
 * codec and level mean what they mean in the command line and in Python: codec NULL and level
 * KPK_LEVEL_DEFAULT is the default; a level alone is a unified level 0-100; a codec alone is a
 * spec ("lz4", "zstd:3", "60", "auto", "none"); a bare codec name and a level is that codec's
 * own level. Writes may be of any size: small ones are buffered inside. */
typedef struct kpk_writer kpk_writer;

/* A file at `path` (UTF-8), written atomically: nothing appears there before kpk_writer_finish
 * succeeds, and an abort or a failure leaves what the path held before. */
kpk_status kpk_writer_open_file(const char *path, const char *codec, int32_t level, int32_t threads,
                                kpk_writer **out);
/* A file built in memory, returned by kpk_writer_finish. */
kpk_status kpk_writer_open_memory(const char *codec, int32_t level, int32_t threads, kpk_writer **out);
/* A new stream; its id (0, 1, ...) goes to *stream. */
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

kpk_status kpk_reader_open_file(const char *path, int32_t threads, kpk_reader **out);
/* A file in memory, read where it lies: `data` must stay valid and unchanged until
 * kpk_reader_close. */
kpk_status kpk_reader_open_memory(const void *data, size_t len, int32_t threads, kpk_reader **out);
uint32_t kpk_reader_stream_count(const kpk_reader *reader);
kpk_status kpk_reader_stream_length(const kpk_reader *reader, uint32_t stream, uint64_t *len);
/* The footer's metadata, borrowed: valid until kpk_reader_close. */
kpk_status kpk_reader_metadata(const kpk_reader *reader, const uint8_t **data, size_t *len);
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
 * be used by several threads at once. */
typedef struct kpk_store kpk_store;

/* Opens the store in folder `path`, creating it when missing. codec/level: the default codec
 * recorded for a new store (NULL and KPK_LEVEL_DEFAULT: the library's default, or the
 * store's); an existing store opened with another is KPK_ERROR_STORE. */
kpk_status kpk_store_open(const char *path, const char *codec, int32_t level, int32_t threads,
                          kpk_store **out);
void kpk_store_close(kpk_store *store);
/* A writer for a new value (add streams, write, set metadata), hashed as it is written;
 * complete it with kpk_store_commit, or discard it with kpk_writer_abort. */
kpk_status kpk_store_writer(const kpk_store *store, kpk_writer **out);
/* Completes `writer` (freed by this call, whatever it returns) and points `key` at its value;
 * the content hash (32 hex digits and a NUL) goes to `hash` unless it is NULL. */
kpk_status kpk_store_commit(const kpk_store *store, const char *ns, const char *key, kpk_writer *writer,
                            char *hash);
/* The value under `key`, open for reading; *out is NULL (and the status KPK_OK) when the key
 * does not exist. */
kpk_status kpk_store_get(const kpk_store *store, const char *ns, const char *key, kpk_reader **out);
kpk_status kpk_store_exists(const kpk_store *store, const char *ns, const char *key, int32_t *exists);
/* *deleted (unless NULL) says whether the key existed. */
kpk_status kpk_store_delete(const kpk_store *store, const char *ns, const char *key, int32_t *deleted);
/* Sorted lists, as kpk_bytes: each item a little-endian uint32 length, then its UTF-8 bytes. */
kpk_status kpk_store_keys(const kpk_store *store, const char *ns, kpk_bytes *keys);
kpk_status kpk_store_namespaces(const kpk_store *store, kpk_bytes *namespaces);

#ifdef __cplusplus
}
#endif
#endif /* KOMPAKT_H */
