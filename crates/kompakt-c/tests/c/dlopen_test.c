/* The shared library loaded at run time, as bindings without a C compiler load it (Julia's
 * ccall, Java's FFM or JNA, Python's ctypes): no link-time dependency on it, every function
 * looked up by name. Checks the library's API version against this header's, then writes and
 * reads with zero-initialized options (the defaults: byte for byte the file the default unified
 * level 21 makes) and with KPK_LEVEL_NONE (stored raw, as the codec "none" stores it).
 * Built and run by crates/kompakt-c/tests/run_c_tests.sh.
 *
 * usage: dlopen_test LIBRARY   (the path of libkompakt_c.so.2) */
#define _POSIX_C_SOURCE 200809L
#include "kompakt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* The functions this program uses, looked up in the library. */
static struct {
    uint32_t (*api_version)(void);
    const char *(*version)(void);
    const char *(*last_error)(void);
    const char *(*status_name)(kpk_status);
    kpk_status (*writer_open_memory)(const kpk_write_options *, kpk_writer **);
    kpk_status (*writer_add_stream)(kpk_writer *, uint32_t *);
    kpk_status (*writer_write)(kpk_writer *, uint32_t, const void *, size_t);
    kpk_status (*writer_finish)(kpk_writer *, kpk_bytes *);
    void (*bytes_free)(kpk_bytes *);
    kpk_status (*reader_open_memory)(const void *, size_t, int32_t, kpk_reader **);
    kpk_status (*reader_stream_length)(const kpk_reader *, uint32_t, uint64_t *);
    kpk_status (*reader_read)(kpk_reader *, uint32_t, uint64_t, void *, size_t, size_t *);
    kpk_status (*reader_file_kind)(const kpk_reader *, kpk_file_kind *);
    void (*reader_close)(kpk_reader *);
} kpk;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,    \
                    #cond, kpk.last_error ? kpk.last_error() : "");                               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Looks `name` up into the function pointer at `fn` (POSIX makes a data pointer from dlsym
 * convertible to a function pointer; memcpy keeps ISO C's pedantic warnings quiet). */
static int load(void *lib, const char *name, void *fn, size_t size) {
    void *symbol = dlsym(lib, name);
    if (!symbol) {
        fprintf(stderr, "dlopen_test: the library has no %s: %s\n", name, dlerror());
        return 0;
    }
    memcpy(fn, &symbol, size);
    return 1;
}
#define LOAD(field, name) load(lib, name, &kpk.field, sizeof kpk.field)

/* The file `data` makes with `opts` (NULL: every default), in memory. */
static kpk_bytes write_with(const kpk_write_options *opts, const unsigned char *data, size_t n) {
    kpk_bytes file = {NULL, 0};
    kpk_writer *w = NULL;
    uint32_t stream = 0;
    CHECK(kpk.writer_open_memory(opts, &w) == KPK_OK);
    if (!w) return file;
    CHECK(kpk.writer_add_stream(w, &stream) == KPK_OK);
    CHECK(kpk.writer_write(w, stream, data, n) == KPK_OK);
    CHECK(kpk.writer_finish(w, &file) == KPK_OK);
    return file;
}

/* Whether `file` reads back as `data`, as a plain file. */
static int reads_back(const kpk_bytes *file, const unsigned char *data, size_t n) {
    kpk_reader *r = NULL;
    uint64_t len = 0;
    size_t got = 0;
    kpk_file_kind kind = -1;
    unsigned char *back = malloc(n);
    int ok = kpk.reader_open_memory(file->data, file->len, 0, &r) == KPK_OK &&
             kpk.reader_stream_length(r, 0, &len) == KPK_OK && len == n &&
             kpk.reader_read(r, 0, 0, back, n, &got) == KPK_OK && got == n && memcmp(back, data, n) == 0 &&
             kpk.reader_file_kind(r, &kind) == KPK_OK && kind == KPK_FILE_PLAIN;
    kpk.reader_close(r);
    free(back);
    return ok;
}

static int same(const kpk_bytes *a, const kpk_bytes *b) {
    return a->len == b->len && a->len > 0 && memcmp(a->data, b->data, a->len) == 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_test: cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    if (!(LOAD(api_version, "kpk_api_version") && LOAD(version, "kpk_version") &&
          LOAD(last_error, "kpk_last_error") && LOAD(status_name, "kpk_status_name") &&
          LOAD(writer_open_memory, "kpk_writer_open_memory") && LOAD(writer_add_stream, "kpk_writer_add_stream") &&
          LOAD(writer_write, "kpk_writer_write") && LOAD(writer_finish, "kpk_writer_finish") &&
          LOAD(bytes_free, "kpk_bytes_free") && LOAD(reader_open_memory, "kpk_reader_open_memory") &&
          LOAD(reader_stream_length, "kpk_reader_stream_length") && LOAD(reader_read, "kpk_reader_read") &&
          LOAD(reader_file_kind, "kpk_reader_file_kind") && LOAD(reader_close, "kpk_reader_close")))
        return 1;

    /* The version check every binding makes before its first call. */
    if (kpk.api_version() != KPK_API_VERSION) {
        fprintf(stderr, "dlopen_test: %s is C API version %u, kompakt.h version %d\n", argv[1],
                (unsigned)kpk.api_version(), KPK_API_VERSION);
        return 1;
    }
    CHECK(strcmp(kpk.status_name(KPK_OK), "ok") == 0);
    CHECK(strcmp(kpk.status_name(KPK_ERROR_LIMIT), "limit") == 0);
    CHECK(strcmp(kpk.status_name(42), "unknown") == 0);

    size_t n = 4u << 20;
    unsigned char *data = malloc(n);
    for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(((i / 5) % 251) ^ (i >> 16));

    /* Zero-initialized options are the defaults: the file NULL options make, and the file the
     * default unified level (21) makes; far smaller than the data. */
    kpk_write_options zero;
    memset(&zero, 0, sizeof zero);
    kpk_write_options level21 = {.size = sizeof level21, .level = 21};
    kpk_bytes by_zero = write_with(&zero, data, n);
    kpk_bytes by_null = write_with(NULL, data, n);
    kpk_bytes by_21 = write_with(&level21, data, n);
    CHECK(same(&by_zero, &by_null) && same(&by_zero, &by_21));
    CHECK(by_zero.len > 0 && by_zero.len < n / 4);
    CHECK(reads_back(&by_zero, data, n));

    /* KPK_LEVEL_NONE stores the data raw: the file the codec "none" makes, larger than it. */
    kpk_write_options raw = {.level = KPK_LEVEL_NONE};
    kpk_write_options none = {.codec = "none"};
    kpk_bytes by_raw = write_with(&raw, data, n);
    kpk_bytes by_none = write_with(&none, data, n);
    CHECK(same(&by_raw, &by_none) && by_raw.len > n);
    CHECK(reads_back(&by_raw, data, n));

    /* A bad option: the status, its name and the message every front end gives. */
    kpk_write_options bad = {.threads = -1};
    kpk_writer *w = NULL;
    kpk_status status = kpk.writer_open_memory(&bad, &w);
    CHECK(status == KPK_ERROR_OPTION && w == NULL && strcmp(kpk.status_name(status), "option") == 0);
    CHECK(strstr(kpk.last_error(), "invalid threads \"-1\": 0 (all cores) to 256") != NULL);

    kpk_bytes *files[] = {&by_zero, &by_null, &by_21, &by_raw, &by_none};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        kpk.bytes_free(files[i]);
        CHECK(files[i]->data == NULL && files[i]->len == 0);
    }
    free(data);
    if (failures) {
        fprintf(stderr, "dlopen_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("dlopen_test: all checks passed (%s: kompakt %s, C API version %u)\n", argv[1], kpk.version(),
           (unsigned)kpk.api_version());
    /* No dlclose: a library whose worker threads may still be parked is loaded for good, as
     * bindings load it. */
    return 0;
}
