/* The C API used from C, as a front end uses it: a file written in many small writes (as R's
 * serializer makes them), read back by ranges into the caller's memory; the same in memory;
 * errors with their codes, names and messages; a store and its lists; tables through Arrow's C
 * data interface; R serialization checks. Built and run by crates/kompakt-c/tests/run_c_tests.sh,
 * linked once with the static library and once with the shared one.
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
    /* zstd's own level 3 on 2 threads; in memory, every default. */
    kpk_write_options opts = {.size = sizeof opts};
    opts.codec = "zstd";
    opts.level = 3;
    opts.threads = 2;
    kpk_status s = path ? kpk_writer_open_file(path, &opts, &w) : kpk_writer_open_memory(NULL, &w);
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

/* ---- tables: a batch built by hand in Arrow's C data interface, as a C producer makes it. -- */

static int released = 0;
static void release_array(struct ArrowArray *a) {
    for (int64_t i = 0; i < a->n_children; i++)
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
    a->release = NULL;
    released++;
}
static void release_schema(struct ArrowSchema *s) { s->release = NULL; }

static void check_tables(const char *folder) {
    enum { N = 100000 };
    static int32_t ints[N];
    static uint8_t validity[(N + 7) / 8];
    static int32_t offsets[N + 1];
    static char text[N * 8];
    int32_t at = 0;
    for (int i = 0; i < N; i++) {
        ints[i] = i * 3;
        if (i % 10 != 0) validity[i / 8] |= (uint8_t)(1u << (i % 8));
        offsets[i] = at;
        at += snprintf(text + at, 8, "%d", i % 1000);
    }
    offsets[N] = at;
    const void *int_buffers[2] = {validity, ints};
    const void *text_buffers[3] = {NULL, offsets, text};
    struct ArrowArray col_i = {N, N / 10, 0, 2, 0, int_buffers, NULL, NULL, release_array, NULL};
    struct ArrowArray col_s = {N, 0, 0, 3, 0, text_buffers, NULL, NULL, release_array, NULL};
    struct ArrowArray *cols[2] = {&col_i, &col_s};
    const void *struct_buffers[1] = {NULL};
    struct ArrowArray batch = {N, 0, 0, 1, 2, struct_buffers, cols, NULL, release_array, NULL};
    struct ArrowSchema s_i = {"i", "n", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL};
    struct ArrowSchema s_s = {"u", "s", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL};
    struct ArrowSchema *schemas[2] = {&s_i, &s_s};
    struct ArrowSchema schema = {"+s", "", NULL, 0, 2, schemas, NULL, release_schema, NULL};

    char path[4096];
    snprintf(path, sizeof path, "%s/table.kpk", folder);
    kpk_table_options opts;
    memset(&opts, 0, sizeof opts); /* every default (size 0: the struct of API version 2) */
    opts.rows_per_group = 8192;
    CHECK(kpk_table_write(path, &schema, &batch, &opts) == KPK_OK);
    CHECK(batch.release == NULL && released == 3); /* moved in, released once with its columns */

    kpk_table *t = NULL;
    CHECK(kpk_table_open_file(path, 0, &t) == KPK_OK);
    CHECK(kpk_table_num_rows(t) == N && kpk_table_rows_per_group(t) == 8192);
    int32_t got[1000];
    uint8_t valid[125];
    int32_t has_nulls = 0;
    CHECK(kpk_table_read_into(t, 0, 50000, 51000, got, sizeof got, valid, &has_nulls) == KPK_OK && has_nulls);
    int ok = 1;
    for (int k = 0; k < 1000; k++) {
        int is_valid = (valid[k / 8] >> (k % 8)) & 1;
        ok &= is_valid == ((50000 + k) % 10 != 0) && (!is_valid || got[k] == (50000 + k) * 3);
    }
    CHECK(ok);
    struct ArrowSchema out_schema;
    struct ArrowArray out;
    uint32_t column = 1;
    CHECK(kpk_table_read(t, &column, 1, 99998, 100000, &out_schema, &out) == KPK_OK);
    CHECK(out.length == 2 && out.n_children == 1 && strcmp(out_schema.children[0]->format, "u") == 0);
    const struct ArrowArray *s = out.children[0];
    const int32_t *o = s->buffers[1];
    const char *d = s->buffers[2];
    CHECK(o[s->offset + 1] - o[s->offset] == 3 && memcmp(d + o[s->offset], "998", 3) == 0);
    out.release(&out);
    out_schema.release(&out_schema);
    CHECK(kpk_table_read_into(t, 1, 0, 1, got, 4, NULL, &has_nulls) == KPK_ERROR_OPTION);
    kpk_table_close(t);
}

/* A filtered read of the table check_tables wrote (n = 3i, null when i % 10 == 0; s = i % 1000
 * as text): the rows where s == "42" and n < 30000, of column n only. */
static void check_filtered_read(const char *folder) {
    char path[4096];
    snprintf(path, sizeof path, "%s/table.kpk", folder);
    kpk_table *t = NULL;
    CHECK(kpk_table_open_file(path, 0, &t) == KPK_OK);
    int32_t limit = 30000;
    const void *limit_buffers[2] = {NULL, &limit};
    struct ArrowArray limit_values = {1, 0, 0, 2, 0, limit_buffers, NULL, NULL, release_array, NULL};
    struct ArrowSchema limit_schema = {"i", "", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL};
    int32_t text_offsets[2] = {0, 2};
    const void *text_buffers[3] = {NULL, text_offsets, "42"};
    struct ArrowArray text_values = {1, 0, 0, 3, 0, text_buffers, NULL, NULL, release_array, NULL};
    struct ArrowSchema text_schema = {"u", "", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL};
    kpk_filter filters[2] = {{"s", "==", &text_schema, &text_values}, {"n", "<", &limit_schema, &limit_values}};
    uint32_t column = 0;
    struct ArrowSchema out_schema;
    struct ArrowArray out;
    int before = released;
    CHECK(kpk_table_read_where(t, &column, 1, 0, kpk_table_num_rows(t), filters, 2, &out_schema, &out) == KPK_OK);
    CHECK(released == before + 2 && text_values.release == NULL && limit_values.release == NULL);
    CHECK(out.length == 10 && out.n_children == 1 && strcmp(out_schema.children[0]->format, "i") == 0);
    if (out.length == 10) {
        const struct ArrowArray *n = out.children[0];
        const int32_t *v = n->buffers[1];
        int ok = n->null_count == 0;
        for (int k = 0; k < 10; k++) ok &= v[n->offset + k] == 3 * (1000 * k + 42);
        CHECK(ok);
    }
    out.release(&out);
    out_schema.release(&out_schema);
    /* A bad op: KPK_ERROR_OPTION, naming the ops; the values are released all the same. */
    struct ArrowArray again = {1, 0, 0, 2, 0, limit_buffers, NULL, NULL, release_array, NULL};
    kpk_filter bad = {"n", "=>", &limit_schema, &again};
    CHECK(kpk_table_read_where(t, NULL, 0, 0, 10, &bad, 1, &out_schema, &out) == KPK_ERROR_OPTION);
    CHECK(strstr(kpk_last_error(), "invalid filter op \"=>\"") != NULL && again.release == NULL);
    /* An unknown column. */
    struct ArrowArray third = {1, 0, 0, 2, 0, limit_buffers, NULL, NULL, release_array, NULL};
    kpk_filter unknown = {"missing", "==", &limit_schema, &third};
    CHECK(kpk_table_read_where(t, NULL, 0, 0, 10, &unknown, 1, &out_schema, &out) == KPK_ERROR_OPTION);
    CHECK(strstr(kpk_last_error(), "\"missing\"") != NULL);
    kpk_table_close(t);
}

/* R serialization checks: a plain list passes, a promise (CVE-2024-27322's shape) is refused
 * with its name, in memory and from a stream of a file. */
static void check_rserial(void) {
    static const char plain[] = "A\n3\n262658\n197888\n5\nUTF-8\n19\n1\n13\n1\n1\n";
    static const char promise[] = "A\n3\n262658\n197888\n5\nUTF-8\n1029\n253\n252\n6\n1\n262153\n1\nq\n254\n";
    CHECK(kpk_rserial_check(plain, strlen(plain), 0) == KPK_OK);
    CHECK(kpk_rserial_check(promise, strlen(promise), 0) == KPK_ERROR_REFUSED);
    CHECK(strstr(kpk_last_error(), "a promise") != NULL);
    CHECK(kpk_rserial_check(plain, strlen(plain) - 2, 0) == KPK_ERROR_CORRUPT);
    CHECK(kpk_rserial_check(plain, strlen(plain), 8) == KPK_ERROR_OPTION);

    kpk_writer *w = NULL;
    uint32_t stream = 0;
    kpk_bytes file = {NULL, 0};
    CHECK(kpk_writer_open_memory(NULL, &w) == KPK_OK);
    CHECK(kpk_writer_add_stream(w, &stream) == KPK_OK);
    CHECK(kpk_writer_write(w, stream, promise, strlen(promise)) == KPK_OK);
    CHECK(kpk_writer_finish(w, &file) == KPK_OK);
    kpk_reader *r = NULL;
    CHECK(kpk_reader_open_memory(file.data, file.len, 1, &r) == KPK_OK);
    CHECK(kpk_reader_check_rserial(r, 0, KPK_RSERIAL_ENVIRONMENTS) == KPK_ERROR_REFUSED);
    CHECK(strstr(kpk_last_error(), "a promise") != NULL);
    kpk_reader_close(r);
    kpk_bytes_free(&file);
}

/* A store: values put in one call, listed as kpk_strings. */
static void check_store(const char *folder) {
    char path[4096];
    snprintf(path, sizeof path, "%s/store", folder);
    kpk_store *store = NULL;
    kpk_write_options opts = {0};
    opts.threads = 2;
    CHECK(kpk_store_open(path, &opts, &store) == KPK_OK);
    if (!store) return;
    const char *keys[] = {"b", "a", "longer key"};
    for (int i = 0; i < 3; i++)
        CHECK(kpk_store_put(store, "objects", keys[i], "value", 5, 1, NULL, NULL, 0, NULL) == KPK_OK);
    CHECK(kpk_store_put(store, "runs", "x", "value", 5, 1, NULL, NULL, 0, NULL) == KPK_OK);
    kpk_strings list = {NULL, NULL, 0};
    CHECK(kpk_store_keys(store, "objects", &list) == KPK_OK && list.count == 3);
    if (list.count == 3) {
        CHECK(strcmp(list.items[0], "a") == 0 && list.lens[0] == 1);
        CHECK(strcmp(list.items[2], "longer key") == 0 && list.lens[2] == 10);
    }
    kpk_strings_free(&list);
    CHECK(list.items == NULL && list.lens == NULL && list.count == 0);
    kpk_strings_free(&list);
    CHECK(kpk_store_namespaces(store, &list) == KPK_OK && list.count == 2);
    if (list.count == 2) CHECK(strcmp(list.items[0], "objects") == 0 && strcmp(list.items[1], "runs") == 0);
    kpk_strings_free(&list);
    CHECK(kpk_store_keys(store, "none yet", &list) == KPK_OK && list.count == 0 && list.items == NULL);
    kpk_strings_free(&list);
    /* A store takes no element size: its values have their own. */
    opts.typesize = 8;
    kpk_store *other = NULL;
    CHECK(kpk_store_open(path, &opts, &other) == KPK_ERROR_OPTION && other == NULL);
    CHECK(strstr(kpk_last_error(), "typesize") != NULL);
    kpk_store_close(store);
}

/* What a file holds, from its metadata. */
static void check_file_kinds(void) {
    static const char *const metadata[] = {
        "", "plain words", "{\"kompakt\": \"r-serialize\", \"version\": 1, \"serialize\": {\"stream\": 0}}",
        "{\"kompakt\":\"python-pickle\",\"version\":1}"};
    static const kpk_file_kind want[] = {KPK_FILE_PLAIN, KPK_FILE_PLAIN, KPK_FILE_R_OBJECT, KPK_FILE_PYTHON_OBJECT};
    for (int i = 0; i < 4; i++) {
        kpk_writer *w = NULL;
        uint32_t stream = 0;
        kpk_bytes file = {NULL, 0};
        CHECK(kpk_writer_open_memory(NULL, &w) == KPK_OK);
        CHECK(kpk_writer_add_stream(w, &stream) == KPK_OK);
        CHECK(kpk_writer_set_metadata(w, metadata[i], strlen(metadata[i])) == KPK_OK);
        CHECK(kpk_writer_finish(w, &file) == KPK_OK);
        kpk_reader *r = NULL;
        kpk_file_kind kind = -1;
        CHECK(kpk_reader_open_memory(file.data, file.len, 1, &r) == KPK_OK);
        CHECK(kpk_reader_file_kind(r, &kind) == KPK_OK && kind == want[i]);
        kpk_reader_close(r);
        kpk_bytes_free(&file);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
        return 2;
    }
    if (kpk_api_version() != KPK_API_VERSION) {
        fprintf(stderr, "api_test: kompakt.h is API version %d, the library %u\n", KPK_API_VERSION,
                (unsigned)kpk_api_version());
        return 1;
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

    /* Errors: codes, names and messages. */
    kpk_writer *w = NULL;
    kpk_write_options brotli = {0};
    brotli.codec = "brotli";
    CHECK(kpk_writer_open_memory(&brotli, &w) == KPK_ERROR_OPTION && w == NULL);
    CHECK(strstr(kpk_last_error(), "invalid codec \"brotli\": one of: none, auto, lz4") != NULL);
    CHECK(strcmp(kpk_status_name(KPK_ERROR_OPTION), "option") == 0);
    CHECK(strcmp(kpk_status_name(KPK_ERROR_DICTIONARY), "dictionary") == 0);
    CHECK(strcmp(kpk_status_name(-3), "unknown") == 0);
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/missing.kpk", argv[1]);
    CHECK(kpk_reader_open_file(missing, 0, &r) == KPK_ERROR_IO);
    CHECK(strstr(kpk_last_error(), "missing.kpk") != NULL);
    CHECK(kpk_writer_write(NULL, 0, "x", 1) == KPK_ERROR_USAGE);

    check_tables(argv[1]);
    check_filtered_read(argv[1]);
    check_rserial();
    check_store(argv[1]);
    check_file_kinds();

    free(data);
    free(all);
    if (failures) {
        fprintf(stderr, "api_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("api_test: all checks passed (kompakt %s, C API version %u)\n", kpk_version(),
           (unsigned)kpk_api_version());
    return 0;
}
