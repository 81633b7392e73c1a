/* R's arguments as the C API's types, named lists, and kompakt's errors as R errors (glue.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glue.h"

/* ---- errors ---------------------------------------------------------------------------------- */

void kpk_r_stop(kpk_status status, const char *message) {
    /* A condition of classes kompakt_<kind>_error and kompakt_error: the kinds of every front
     * end (kpk_status_name), as Python's exception classes and the command line's exit codes. */
    char kind[64];
    snprintf(kind, sizeof kind, "kompakt_%s_error", kpk_status_name(status));
    SEXP cond = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, Rf_mkChar("message"));
    SET_STRING_ELT(names, 1, Rf_mkChar("call"));
    SET_VECTOR_ELT(cond, 0, Rf_mkString(message));
    SET_VECTOR_ELT(cond, 1, R_NilValue);
    Rf_setAttrib(cond, R_NamesSymbol, names);
    SEXP classes = PROTECT(Rf_allocVector(STRSXP, 4));
    SET_STRING_ELT(classes, 0, Rf_mkChar(kind));
    SET_STRING_ELT(classes, 1, Rf_mkChar("kompakt_error"));
    SET_STRING_ELT(classes, 2, Rf_mkChar("error"));
    SET_STRING_ELT(classes, 3, Rf_mkChar("condition"));
    Rf_setAttrib(cond, R_ClassSymbol, classes);
    SEXP call = PROTECT(Rf_lang2(Rf_install("stop"), cond));
    Rf_eval(call, R_BaseEnv);
    UNPROTECT(4);
    Rf_error("%s", message); /* not reached: stop() does not return */
}

void kpk_r_error(const char *doing) {
    char message[2048];
    snprintf(message, sizeof message, "kompakt: %s: %s", doing, kpk_last_error());
    kpk_r_stop(kpk_last_status(), message);
}

void kpk_r_error_about(const char *doing, const char *what) {
    char message[2048];
    const char *last = kpk_last_error();
    if (strncmp(last, what, strlen(what)) == 0)
        snprintf(message, sizeof message, "kompakt: %s: %s", doing, last);
    else
        snprintf(message, sizeof message, "kompakt: %s %s: %s", doing, what, last);
    kpk_r_stop(kpk_last_status(), message);
}

/* ---- named lists ----------------------------------------------------------------------------- */

SEXP kpk_r_field(SEXP list, const char *name) {
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    if (TYPEOF(list) != VECSXP || TYPEOF(names) != STRSXP)
        Rf_error("kompakt: internal error: expected a named list holding '%s'", name);
    for (R_xlen_t i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
    Rf_error("kompakt: internal error: the list passed to C has no element '%s'", name);
    return R_NilValue; /* not reached */
}

SEXP kpk_r_field_of(SEXP list, const char *name, SEXPTYPE type, R_xlen_t n) {
    SEXP x = kpk_r_field(list, name);
    if ((SEXPTYPE)TYPEOF(x) != type || (n >= 0 && XLENGTH(x) != n))
        Rf_error("kompakt: internal error: '%s' passed to C is a %s of length %.0f, not a %s", name,
                 Rf_type2char(TYPEOF(x)), (double)Rf_xlength(x), Rf_type2char(type));
    return x;
}

SEXP kpk_r_named_list(int n, const char *const *names) {
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

/* ---- arguments ------------------------------------------------------------------------------- */

const char *kpk_r_codec(SEXP codec) {
    if (Rf_isNull(codec)) return NULL;
    if (!Rf_isString(codec) || XLENGTH(codec) != 1 || STRING_ELT(codec, 0) == NA_STRING)
        Rf_error("kompakt: codec must be NULL or one string such as \"zstd\", \"lz4\", \"zstd:3\" or \"60\"");
    return Rf_translateCharUTF8(STRING_ELT(codec, 0));
}

/* R's `sync`: NULL (the default: $KOMPAKT_SYNC, else "none") or one string, "always" or
 * "none", which the C API checks with every front end's message. */
const char *kpk_r_sync(SEXP sync) {
    if (Rf_isNull(sync)) return NULL;
    if (!Rf_isString(sync) || XLENGTH(sync) != 1 || STRING_ELT(sync, 0) == NA_STRING)
        Rf_error("kompakt: sync must be NULL or one string, \"always\" (fsync each file) or \"none\" (atomic rename, no fsync)");
    return Rf_translateCharUTF8(STRING_ELT(sync, 0));
}

/* R's `level`: NULL (none given) or a whole number, a unified level 0-100 (0: raw) or, with a
 * bare codec name, that codec's own level. This is the only function that knows how the C API
 * spells "no level" (KPK_LEVEL_DEFAULT, 0) and "raw" (KPK_LEVEL_NONE). The range is the C
 * API's to check, with the message of every front end. */
int32_t kpk_r_level(SEXP level) {
    if (Rf_isNull(level)) return KPK_LEVEL_DEFAULT;
    if (!Rf_isNumeric(level) || Rf_isFactor(level) || XLENGTH(level) != 1)
        Rf_error("kompakt: level must be NULL or one whole number (a unified level 0-100, or the codec's own)");
    double v = Rf_asReal(level);
    if (ISNAN(v) || v != floor(v) || v <= (double)INT32_MIN || v >= (double)KPK_LEVEL_NONE)
        Rf_error("kompakt: level must be NULL or one whole number, got %g", v);
    return v == 0 ? KPK_LEVEL_NONE : (int32_t)v;
}

/* R's `threads`: one whole number, passed on; the C API checks the range (0 for all cores, at
 * most 256) with the message of every front end. */
int32_t kpk_r_threads(SEXP threads) {
    if (!Rf_isNumeric(threads) || Rf_isFactor(threads) || XLENGTH(threads) != 1)
        Rf_error("kompakt: threads must be one number: 0 for all cores, or how many threads");
    double v = Rf_asReal(threads);
    if (ISNAN(v) || v != floor(v) || v < (double)INT32_MIN || v > (double)INT32_MAX)
        Rf_error("kompakt: threads must be one whole number, 0 (all cores) to 256, got %g", v);
    return (int32_t)v;
}

int kpk_r_flag(SEXP x, const char *what) {
    if (!Rf_isLogical(x) || XLENGTH(x) != 1 || LOGICAL(x)[0] == NA_LOGICAL)
        Rf_error("kompakt: %s must be TRUE or FALSE", what);
    return LOGICAL(x)[0];
}

const char *kpk_r_string(SEXP x, const char *what) {
    if (!Rf_isString(x) || XLENGTH(x) != 1 || STRING_ELT(x, 0) == NA_STRING)
        Rf_error("kompakt: %s must be one string", what);
    return Rf_translateCharUTF8(STRING_ELT(x, 0));
}

const char *kpk_r_path(SEXP file) {
    if (!Rf_isString(file) || XLENGTH(file) != 1 || STRING_ELT(file, 0) == NA_STRING)
        Rf_error("kompakt: file must be one path (a string)");
    return R_ExpandFileName(Rf_translateCharUTF8(STRING_ELT(file, 0)));
}
