/* The package's .Call entry points, registered (and only reachable) as symbols. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#include "kompakt.h"

/* kompakt.c: objects and the object store. */
SEXP kpk_save_c(SEXP object, SEXP file, SEXP options);
SEXP kpk_serialize_c(SEXP object, SEXP options);
SEXP kpk_read_c(SEXP file, SEXP options);
SEXP kpk_unserialize_c(SEXP raw, SEXP options);
SEXP kpk_rserial_check_c(SEXP raw);
SEXP kpk_version_c(void);
SEXP kpk_store_open_c(SEXP path, SEXP options);
SEXP kpk_store_close_c(SEXP ptr);
SEXP kpk_store_set_c(SEXP ptr, SEXP ns, SEXP key, SEXP value);
SEXP kpk_store_get_c(SEXP ptr, SEXP ns, SEXP key, SEXP trusted);
SEXP kpk_store_exists_c(SEXP ptr, SEXP ns, SEXP keys);
SEXP kpk_store_del_c(SEXP ptr, SEXP ns, SEXP keys);
SEXP kpk_store_keys_c(SEXP ptr, SEXP ns);
SEXP kpk_store_namespaces_c(SEXP ptr);
SEXP kpk_store_set_raw_c(SEXP ptr, SEXP ns, SEXP key, SEXP raw, SEXP serialized);
SEXP kpk_store_get_raw_c(SEXP ptr, SEXP ns, SEXP key);
SEXP kpk_store_clear_c(SEXP ptr, SEXP ns);
SEXP kpk_store_gc_c(SEXP ptr);
SEXP kpk_store_check_c(SEXP ptr, SEXP ns, SEXP keys, SEXP full);
/* meta.c: what a file's metadata says it holds (for the tests). */
SEXP kpk_meta_kind_c(SEXP raw);
/* table_write.c and table_read.c: table files. */
SEXP kpk_table_write_c(SEXP frame, SEXP file, SEXP options, SEXP append);
SEXP kpk_table_open_c(SEXP source, SEXP threads);
SEXP kpk_table_close_c(SEXP ptr);
SEXP kpk_table_info_c(SEXP ptr);
SEXP kpk_table_fingerprint_c(SEXP ptr);
SEXP kpk_table_sizes_c(SEXP ptr);
SEXP kpk_table_read_c(SEXP ptr, SEXP spec);

#define CALL(name, n) {#name, (DL_FUNC)&name, n}

static const R_CallMethodDef call_methods[] = {
    CALL(kpk_save_c, 3),
    CALL(kpk_serialize_c, 2),
    CALL(kpk_read_c, 2),
    CALL(kpk_unserialize_c, 2),
    CALL(kpk_rserial_check_c, 1),
    CALL(kpk_version_c, 0),
    CALL(kpk_store_open_c, 2),
    CALL(kpk_store_close_c, 1),
    CALL(kpk_store_set_c, 4),
    CALL(kpk_store_get_c, 4),
    CALL(kpk_store_exists_c, 3),
    CALL(kpk_store_del_c, 3),
    CALL(kpk_store_keys_c, 2),
    CALL(kpk_store_namespaces_c, 1),
    CALL(kpk_store_set_raw_c, 5),
    CALL(kpk_store_get_raw_c, 3),
    CALL(kpk_store_clear_c, 2),
    CALL(kpk_store_gc_c, 1),
    CALL(kpk_store_check_c, 4),
    CALL(kpk_meta_kind_c, 1),
    CALL(kpk_table_write_c, 4),
    CALL(kpk_table_open_c, 2),
    CALL(kpk_table_close_c, 1),
    CALL(kpk_table_info_c, 1),
    CALL(kpk_table_fingerprint_c, 1),
    CALL(kpk_table_sizes_c, 1),
    CALL(kpk_table_read_c, 2),
    {NULL, NULL, 0}};

void R_init_kompakt(DllInfo *dll) {
    /* The library linked must speak the header's API: a library of another major version
     * would read these calls' arguments differently. */
    if (kpk_api_version() != KPK_API_VERSION)
        Rf_error("kompakt: the C library speaks API version %u, this package was built for %d",
                 (unsigned)kpk_api_version(), KPK_API_VERSION);
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
