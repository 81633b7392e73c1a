/* The C API used from C, as a front end uses it: a file written in many small writes (as R's
 * serializer makes them), read back by ranges into the caller's memory; the same in memory;
 * errors with their codes and messages. Built and run by crates/kompakt-c/tests/run_c_tests.sh.
 *
 * usage: api_test FOLDER   (a writable folder for its files) */
#include "kompakt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,    \
                    #cond, kpk_last_error());                                                      \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static unsigned char *make_data(size_t n) {
    unsigned char *d = malloc(n);
    for (size_t i = 0; i < n; i++) d[i] = (unsigned char)((i / 7) ^ (i >> 13));
    return d;
}

/* Writes `data` in `chunk`-byte writes, with metadata, to `path` (or memory when NULL). */
static kpk_status write_file(const char *path, const unsigned char *data, size_t n, size_t chunk,
                             kpk_bytes *out) {
    kpk_writer *w = NULL;
    kpk_status s = path ? kpk_writer_open_file(path, "zstd", 3, 2, &w)
                        : kpk_writer_open_memory(NULL, KPK_LEVEL_DEFAULT, 0, &w);
    if (s != KPK_OK) return s;
    uint32_t stream = 99;
    CHECK(kpk_writer_add_stream(w, &stream) == KPK_OK && stream == 0);
    for (size_t at = 0; at < n; at += chunk) {
        size_t len = n - at < chunk ? n - at : chunk;
        if ((s = kpk_writer_write(w, stream, data + at, len)) != KPK_OK) {
            kpk_writer_abort(w);
            return s;
        }
    }
    CHECK(kpk_writer_set_metadata(w, "from C", 6) == KPK_OK);
    return kpk_writer_finish(w, out);
}

static void check_reader(kpk_reader *r, const unsigned char *data, size_t n) {
    CHECK(kpk_reader_stream_count(r) == 1);
    uint64_t len = 0;
    CHECK(kpk_reader_stream_length(r, 0, &len) == KPK_OK && len == n);
    const uint8_t *meta = NULL;
    size_t meta_len = 0;
    CHECK(kpk_reader_metadata(r, &meta, &meta_len) == KPK_OK && meta_len == 6 &&
          memcmp(meta, "from C", 6) == 0);
    size_t want = 300000, got = 0;
    unsigned char *buf = malloc(want);
    CHECK(kpk_reader_read(r, 0, 1234567, buf, want, &got) == KPK_OK && got == want);
    CHECK(memcmp(buf, data + 1234567, want) == 0);
    CHECK(kpk_reader_read(r, 0, n - 5, buf, want, &got) == KPK_OK && got == 5);
    CHECK(kpk_reader_read(r, 0, n + 1, buf, 1, &got) == KPK_ERROR_OPTION);
    CHECK(strstr(kpk_last_error(), "past the end") != NULL);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/from_c.kpk", argv[1]);
    size_t n = 3 * 1000 * 1000;
    unsigned char *data = make_data(n);

    /* A file, written 4 bytes at a time. */
    CHECK(write_file(path, data, n, 4, NULL) == KPK_OK);
    kpk_reader *r = NULL;
    CHECK(kpk_reader_open_file(path, 0, &r) == KPK_OK);
    if (r) check_reader(r, data, n);
    kpk_reader_close(r);

    /* In memory, written 1000 bytes at a time, read where it lies. */
    kpk_bytes file = {NULL, 0};
    CHECK(write_file(NULL, data, n, 1000, &file) == KPK_OK);
    r = NULL;
    CHECK(kpk_reader_open_memory(file.data, file.len, 2, &r) == KPK_OK);
    if (r) check_reader(r, data, n);
    kpk_reader_close(r);

    /* Damage: a flipped byte in the middle is a checksum error, naming no path in memory. */
    file.data[file.len / 2] ^= 1;
    r = NULL;
    CHECK(kpk_reader_open_memory(file.data, file.len, 0, &r) == KPK_OK);
    unsigned char *all = malloc(n);
    size_t got = 0;
    CHECK(kpk_reader_read(r, 0, 0, all, n, &got) == KPK_ERROR_CORRUPT);
    CHECK(strstr(kpk_last_error(), "checksum") != NULL);
    kpk_reader_close(r);
    kpk_bytes_free(&file);
    CHECK(file.data == NULL && file.len == 0);

    /* Errors: codes and messages. */
    kpk_writer *w = NULL;
    CHECK(kpk_writer_open_memory("brotli", KPK_LEVEL_DEFAULT, 0, &w) == KPK_ERROR_OPTION);
    CHECK(strstr(kpk_last_error(), "lz4") != NULL);
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/missing.kpk", argv[1]);
    CHECK(kpk_reader_open_file(missing, 0, &r) == KPK_ERROR_IO);
    CHECK(strstr(kpk_last_error(), "missing.kpk") != NULL);
    CHECK(kpk_writer_write(NULL, 0, "x", 1) == KPK_ERROR_USAGE);

    free(data);
    free(all);
    if (failures) {
        fprintf(stderr, "api_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("api_test: all checks passed (kompakt %s)\n", kpk_version());
    return 0;
}
