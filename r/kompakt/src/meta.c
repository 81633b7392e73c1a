/* What a kompakt file holds, from its footer metadata (docs/FORMAT.md, "R object files",
 * "Python object files", "Table files").
 *
 * Object files describe themselves in JSON: {"kompakt": "r-serialize", "version": 1,
 * "serialize": {"stream": 0, ...}}. Any JSON text of that shape is one, however it is spaced
 * and whatever order its members come in; a member given twice counts as its last value (as
 * Python's json module reads it). Metadata that is not a JSON object is not an object file. */
#include <string.h>

#include "glue.h"

const char KPK_R_OBJECT_META[] =
    "{\"kompakt\":\"r-serialize\",\"version\":1,\"serialize\":{\"stream\":0,\"format\":\"binary\",\"version\":3}}";

/* The layout of R object files this package reads. */
#define R_OBJECT_VERSION 1
/* Deeper nesting than this is not metadata kompakt writes: the text is not read as JSON. */
#define MAX_DEPTH 64
/* Strings compared with the names and kinds below; longer ones match none of them. */
#define SHORT 32

typedef struct {
    const uint8_t *p, *end;
} json;

/* An integer member: whether it was given, and whether it was an integer (no fraction, no
 * exponent, within int64). */
typedef struct {
    int given, integer;
    int64_t value;
} number;

typedef struct {
    char kind[SHORT + 1]; /* the "kompakt" member when it is a short string, else "" */
    number version;
    int serialize_given, serialize_object;
    number stream;
} fields;

static void space(json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int hex4(json *j, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++, j->p++) {
        if (j->p >= j->end) return 0;
        uint8_t c = *j->p;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* A string (at its opening quote). Its value goes to `out` (SHORT + 1 bytes, or NULL) when it is
 * ASCII of at most SHORT characters, else `out` gets "" and *fits 0. Returns 0 if not valid. */
static int string(json *j, char *out, int *fits) {
    size_t n = 0;
    int ok = 1;
    j->p++; /* the quote */
    while (j->p < j->end) {
        uint8_t c = *j->p++;
        unsigned ch = c;
        if (c == '"') {
            if (out) out[ok ? n : 0] = '\0';
            if (fits) *fits = ok;
            return 1;
        }
        if (c < 0x20) return 0; /* control characters must be escaped */
        if (c == '\\') {
            if (j->p >= j->end) return 0;
            switch (*j->p++) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u':
                if (!hex4(j, &ch)) return 0;
                break;
            default: return 0;
            }
        }
        if (ch >= 0x80 || n == SHORT) ok = 0; /* names and kinds are short ASCII */
        else if (out) out[n++] = (char)ch;
    }
    return 0; /* no closing quote */
}

static int digits(json *j) {
    const uint8_t *start = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    return j->p > start;
}

/* A number (RFC 8259's grammar); its value when it is an integer. */
static int number_value(json *j, number *out) {
    int negative = j->p < j->end && *j->p == '-';
    if (negative) j->p++;
    const uint8_t *int_start = j->p;
    if (!digits(j)) return 0;
    if (j->p - int_start > 1 && *int_start == '0') return 0; /* no leading zeros */
    const uint8_t *int_end = j->p;
    int integer = 1;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (!digits(j)) return 0;
        integer = 0;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (!digits(j)) return 0;
        integer = 0;
    }
    if (out) {
        out->given = 1;
        out->integer = integer && int_end - int_start <= 18;
        int64_t v = 0;
        for (const uint8_t *d = int_start; out->integer && d < int_end; d++) v = v * 10 + (*d - '0');
        out->value = negative ? -v : v;
    }
    return 1;
}

static int literal(json *j, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return 0;
    j->p += n;
    return 1;
}

static int object(json *j, int depth, fields *f, int level);

/* Any value, skipped (`depth`: how deep it is nested). */
static int skip(json *j, int depth) {
    if (depth > MAX_DEPTH || j->p >= j->end) return 0;
    switch (*j->p) {
    case '"': return string(j, NULL, NULL);
    case '{': return object(j, depth, NULL, -1);
    case '[':
        j->p++;
        space(j);
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return 1;
        }
        for (;;) {
            space(j);
            if (!skip(j, depth + 1)) return 0;
            space(j);
            if (j->p >= j->end) return 0;
            if (*j->p == ']') {
                j->p++;
                return 1;
            }
            if (*j->p++ != ',') return 0;
        }
    case 't': return literal(j, "true");
    case 'f': return literal(j, "false");
    case 'n': return literal(j, "null");
    default: return number_value(j, NULL);
    }
}

/* A member that should be an integer: given, and an integer or not. */
static int member_number(json *j, int depth, number *out) {
    memset(out, 0, sizeof *out);
    if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) return number_value(j, out);
    out->given = 1; /* a string, an object, ...: given, and not an integer */
    return skip(j, depth + 1);
}

/* An object (at its brace). `level` 0: the metadata itself, whose "kompakt", "version" and
 * "serialize" go to `f`; 1: the "serialize" member, whose "stream" goes to `f`; -1: skipped. */
static int object(json *j, int depth, fields *f, int level) {
    if (depth > MAX_DEPTH) return 0;
    j->p++; /* the brace */
    space(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 1;
    }
    for (;;) {
        char name[SHORT + 1];
        space(j);
        if (j->p >= j->end || *j->p != '"' || !string(j, name, NULL)) return 0;
        space(j);
        if (j->p >= j->end || *j->p++ != ':') return 0;
        space(j);
        if (j->p >= j->end) return 0;
        int ok;
        if (level == 0 && strcmp(name, "kompakt") == 0) {
            f->kind[0] = '\0';
            ok = *j->p == '"' ? string(j, f->kind, NULL) : skip(j, depth + 1);
        } else if (level == 0 && strcmp(name, "version") == 0) {
            ok = member_number(j, depth, &f->version);
        } else if (level == 0 && strcmp(name, "serialize") == 0) {
            f->serialize_given = 1;
            f->serialize_object = *j->p == '{';
            f->stream.given = 0;
            ok = f->serialize_object ? object(j, depth + 1, f, 1) : skip(j, depth + 1);
        } else if (level == 1 && strcmp(name, "stream") == 0) {
            ok = member_number(j, depth, &f->stream);
        } else {
            ok = skip(j, depth + 1);
        }
        if (!ok) return 0;
        space(j);
        if (j->p >= j->end) return 0;
        if (*j->p == '}') {
            j->p++;
            return 1;
        }
        if (*j->p++ != ',') return 0;
    }
}

kpk_meta_kind kpk_r_meta_kind(const uint8_t *meta, size_t len, uint32_t *stream) {
    *stream = 0;
    if (len >= 4 && memcmp(meta, "KTBL", 4) == 0) return KPK_META_TABLE;
    json j = {meta, meta + len};
    fields f;
    memset(&f, 0, sizeof f);
    space(&j);
    if (j.p >= j.end || *j.p != '{' || !object(&j, 0, &f, 0)) return KPK_META_PLAIN;
    space(&j);
    if (j.p != j.end) return KPK_META_PLAIN; /* text after the object: not JSON */
    if (strcmp(f.kind, "python-pickle") == 0) return KPK_META_PYTHON;
    if (strcmp(f.kind, "r-serialize") != 0) return KPK_META_PLAIN;
    if (!f.version.given || !f.version.integer || f.version.value < 1) return KPK_META_R_DAMAGED;
    if (f.version.value > R_OBJECT_VERSION) return KPK_META_R_NEWER;
    if (f.serialize_given && !f.serialize_object) return KPK_META_R_DAMAGED;
    if (f.stream.given) {
        if (!f.stream.integer || f.stream.value < 0 || f.stream.value > (int64_t)UINT32_MAX) return KPK_META_R_DAMAGED;
        *stream = (uint32_t)f.stream.value;
    }
    return KPK_META_R_OBJECT;
}

/* kpk_meta_kind_c(raw): list(kind, stream), what kpk_r_meta_kind makes of metadata bytes (for
 * the tests of this parser). */
SEXP kpk_meta_kind_c(SEXP raw) {
    static const char *const names[] = {"kind", "stream"};
    static const char *const kinds[] = {"r", "r-newer", "r-damaged", "python", "table", "plain"};
    if (TYPEOF(raw) != RAWSXP) Rf_error("kompakt: metadata must be a raw vector");
    uint32_t stream = 0;
    kpk_meta_kind kind = kpk_r_meta_kind(RAW(raw), (size_t)XLENGTH(raw), &stream);
    SEXP out = PROTECT(kpk_r_named_list(2, names));
    SET_VECTOR_ELT(out, 0, Rf_mkString(kinds[kind]));
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double)stream));
    UNPROTECT(1);
    return out;
}
