/* The analyzer reader's forward pass in C: _pass._read, line finding and decoding
 * included, for the common file.
 *
 * ctxrelay.transcripts._pass is the reference and the fallback: this module is an
 * optional accelerator (built when a C compiler is there, see hatch_build.py). It
 * answers exactly as the Python code does, or returns None and lets the Python code read
 * the file. tests/transcripts/test_native.py holds the two to the same output, on the
 * real corpus and on generated lines and files.
 *
 *   spans(data) -> list[tuple[int, int, int]]
 *       _pass._spans(data): (start, end, usage at or -1) of the lines that can matter.
 *   read(data, agent) -> tuple | None
 *       _pass._read's result without its path and size: (session id, version,
 *       responses, compactions, lines decoded, malformed lines, synthetic responses).
 *       None when a line needs json's own judgement: an escape in a key or in a string
 *       the reader keeps, a count that is not a plain integer, deep nesting, a line that
 *       does not start with a brace (json would strip or detect an encoding), a
 *       synthetic response whose id is neither a string nor null.
 *
 * The decoder accepts exactly what json.loads(bytes) accepts: the bytes are UTF-8
 * (surrogates allowed, as json's 'surrogatepass'), strings hold no control character
 * and only JSON's escapes, numbers follow JSON's grammar, NaN/Infinity/-Infinity are
 * values, whitespace is ' \t\n\r', nothing follows the value. A key met twice keeps
 * its last value, as in json.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 256 /* deeper than this, json's recursion limit decides: NOT_SURE */

/* ---- byte searches with Python's bytes.find / rfind semantics ---- */

#ifndef __GLIBC__
/* memrchr is a GNU extension (macOS's libc has none). */
static void *memrchr(const void *s, int c, size_t n)
{
    const unsigned char *p = (const unsigned char *)s + n;
    while (p > (const unsigned char *)s)
        if (*--p == (unsigned char)c)
            return (void *)p;
    return NULL;
}
#endif

/* First index in hay[from:to] of needle ``a`` or (when not NULL) ``b``, both ``n``
 * bytes long and alike in their first and last two bytes, or -1. A block of positions is
 * tested at once for those three bytes (a quote, then the needle's end: rare together
 * in JSON) and only the positions that pass are compared whole. glibc's memmem is the
 * generic algorithm, several times slower here. */
#define CANDIDATES(load, eq, and, mask, width)                                               \
    for (; i + (width - 1) <= last; i += width) {                                             \
        unsigned long m = (unsigned long)mask(                                                \
            and(and(eq(load(hay + i), first), eq(load(hay + i + n - 2), penult)),            \
                eq(load(hay + i + n - 1), tail)));                                            \
        while (m) {                                                                           \
            Py_ssize_t at = i + __builtin_ctzl(m);                                            \
            if (memcmp(hay + at, a, (size_t)n) == 0 || (b && memcmp(hay + at, b, (size_t)n) == 0)) \
                return at;                                                                    \
            m &= m - 1;                                                                       \
        }                                                                                     \
    }

#ifdef __SSE2__
#define LOAD16(p) _mm_loadu_si128((const __m128i *)(p))
static Py_ssize_t blocks16(const char *hay, Py_ssize_t i, Py_ssize_t last, const char *a,
                           const char *b, Py_ssize_t n, Py_ssize_t *next)
{
    const __m128i first = _mm_set1_epi8(a[0]), penult = _mm_set1_epi8(a[n - 2]),
                  tail = _mm_set1_epi8(a[n - 1]);
    CANDIDATES(LOAD16, _mm_cmpeq_epi8, _mm_and_si128, _mm_movemask_epi8, 16)
    *next = i;
    return -1;
}
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
static int use_avx2;
#define LOAD32(p) _mm256_loadu_si256((const __m256i *)(p))
__attribute__((target("avx2"))) static Py_ssize_t blocks32(const char *hay, Py_ssize_t i,
                                                          Py_ssize_t last, const char *a,
                                                          const char *b, Py_ssize_t n,
                                                          Py_ssize_t *next)
{
    const __m256i first = _mm256_set1_epi8(a[0]), penult = _mm256_set1_epi8(a[n - 2]),
                  tail = _mm256_set1_epi8(a[n - 1]);
    CANDIDATES(LOAD32, _mm256_cmpeq_epi8, _mm256_and_si256, (unsigned)_mm256_movemask_epi8, 32)
    *next = i;
    return -1;
}
#endif

static Py_ssize_t find_any(const char *hay, Py_ssize_t from, Py_ssize_t to, const char *a,
                           const char *b, Py_ssize_t n)
{
    if (to - from < n)
        return -1;
    Py_ssize_t i = from, last = to - n; /* the last position a match can start at */
    Py_ssize_t found;
#ifdef HAVE_AVX2_PATH
    if (use_avx2 && (found = blocks32(hay, i, last, a, b, n, &i)) != -1)
        return found;
#endif
#ifdef __SSE2__
    if ((found = blocks16(hay, i, last, a, b, n, &i)) != -1)
        return found;
#endif
    for (; i <= last; i++)
        if (memcmp(hay + i, a, (size_t)n) == 0 || (b && memcmp(hay + i, b, (size_t)n) == 0))
            return i;
    return -1;
}

static Py_ssize_t find(const char *hay, Py_ssize_t from, Py_ssize_t to, const char *needle,
                       Py_ssize_t n)
{
    return find_any(hay, from, to, needle, NULL, n);
}

/* Last index of needle in hay[from:to], or -1 (the needle's first byte is rare). */
static Py_ssize_t rfind(const char *hay, Py_ssize_t from, Py_ssize_t to, const char *needle,
                        Py_ssize_t n)
{
    Py_ssize_t last = to - n;
    while (last >= from) {
        const char *at = memrchr(hay + from, needle[0], (size_t)(last - from + 1));
        if (at == NULL)
            return -1;
        Py_ssize_t i = at - hay;
        if (memcmp(at, needle, (size_t)n) == 0)
            return i;
        last = i - 1;
    }
    return -1;
}

static Py_ssize_t line_start(const char *data, Py_ssize_t at)
{
    const char *nl = memrchr(data, '\n', (size_t)at);
    return nl == NULL ? 0 : (Py_ssize_t)(nl - data) + 1;
}

static Py_ssize_t line_end(const char *data, Py_ssize_t at, Py_ssize_t size)
{
    const char *nl = memchr(data + at, '\n', (size_t)(size - at));
    return nl == NULL ? size : (Py_ssize_t)(nl - data);
}

static const char USAGE[] = "\"output_tokens\":";
static const char BOUNDARY[] = "\"compact_boundary\"";
static const char SUMMARY[] = "\"isCompactSummary\"";
static const char MESSAGE[] = "\"message\":{";
static const char CONTENT[] = "\"content\":[";
static const char CONTENT_END[] = "],\"stop_reason\":";
#define LEN(s) ((Py_ssize_t)(sizeof(s) - 1))

/* ---- spans ---- */

typedef struct {
    Py_ssize_t start, end, needle;
    int rank; /* which search found it first: the first one wins, as dict.setdefault */
} Span;

typedef struct {
    Span *items;
    Py_ssize_t len, cap;
} Spans;

static int push(Spans *s, Py_ssize_t start, Py_ssize_t end, Py_ssize_t needle, int rank)
{
    if (s->len == s->cap) {
        Py_ssize_t cap = s->cap ? s->cap * 2 : 256;
        Span *items = PyMem_Realloc(s->items, (size_t)cap * sizeof(Span));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->items = items;
        s->cap = cap;
    }
    s->items[s->len++] = (Span){start, end, needle, rank};
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->rank - y->rank;
}

static int push_lines_of(Spans *s, const char *data, Py_ssize_t size, Py_ssize_t from,
                         const char *a, const char *b, Py_ssize_t n, int rank, int keep_needle)
{
    Py_ssize_t at = find_any(data, from, size, a, b, n);
    while (at != -1) {
        Py_ssize_t start = line_start(data, at), end = line_end(data, at, size);
        if (push(s, start, end, keep_needle ? at : -1, rank) < 0)
            return -1;
        at = find_any(data, end, size, a, b, n);
    }
    return 0;
}

/* The spans of data, in file order, each start once (the first search to find it
 * wins, as dict.setdefault in _pass._spans). 0, or -1 with an error set. */
static int find_spans(Spans *s, const char *data, Py_ssize_t size)
{
    if (push_lines_of(s, data, size, 0, USAGE, NULL, LEN(USAGE), 0, 1) < 0)
        return -1;
    /* an unterminated last line is decoded whatever it holds */
    if (size && data[size - 1] != '\n' && push(s, line_start(data, size), size, -1, 1) < 0)
        return -1;
    Py_ssize_t first = find(data, 0, size, BOUNDARY, LEN(BOUNDARY));
    /* the lines of either name from the first boundary on, in one search (the two names
     * are as long and end alike): the same lines as _pass's two searches */
    if (first != -1 &&
        push_lines_of(s, data, size, first, BOUNDARY, SUMMARY, LEN(BOUNDARY), 2, 0) < 0)
        return -1;
    if (s->len)
        qsort(s->items, (size_t)s->len, sizeof(Span), by_start);
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < s->len; i++)
        if (kept == 0 || s->items[i].start != s->items[kept - 1].start)
            s->items[kept++] = s->items[i];
    s->len = kept;
    return 0;
}

static PyObject *spans(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Spans s = {NULL, 0, 0};
    PyObject *out = NULL;
    if (find_spans(&s, view.buf, view.len) == 0 && (out = PyList_New(s.len)) != NULL)
        for (Py_ssize_t i = 0; i < s.len; i++) {
            PyObject *t = Py_BuildValue("(nnn)", s.items[i].start, s.items[i].end,
                                        s.items[i].needle);
            if (t == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, t);
        }
    PyMem_Free(s.items);
    PyBuffer_Release(&view);
    return out;
}

/* ---- a JSON validator with json.loads's grammar ---- */

typedef enum { OK = 0, BAD = -1, NOT_SURE = -2, FAILED = -3 } Status;
/* BAD: json.loads refuses the document. NOT_SURE: only json.loads can tell.
 * FAILED: a Python error is set (out of memory). */

typedef struct {
    const unsigned char *p, *end;
    int depth;
} Parser;

static inline void skip_ws(Parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static inline int hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The value of the four hex digits at p (checked by the caller). */
static unsigned hex4(const unsigned char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* PLAIN[c]: c may stand in a JSON string as it is and is ASCII (no quote, backslash or
 * control character), the bytes a string scan skips without a second look. */
static unsigned char PLAIN[256];

static void init_plain(void)
{
    for (int c = 0x20; c < 0x80; c++)
        PLAIN[c] = c != '"' && c != '\\';
}

/* One UTF-8 sequence at p (its lead byte >= 0x80), as Python's decoder with
 * 'surrogatepass' accepts it; its length, or 0 when invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
    }
    else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    }
    else
        return 0;
    if (end - p < n)
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* The string at ps->p (its opening quote): its body and byte length, whether it holds an
 * escape, and its length in code points as json decodes it (an escaped surrogate pair
 * is one code point, as json joins it). */
static Status scan_string(Parser *ps, const unsigned char **body, Py_ssize_t *len,
                          int *escaped, Py_ssize_t *points)
{
    const unsigned char *p = ps->p + 1, *end = ps->end;
    Py_ssize_t count = 0;
    *escaped = 0;
    *body = p;
    for (;;) {
        const unsigned char *run = p;
        /* the bulk: plain ASCII that is neither a quote, a backslash nor a control */
#ifdef __SSE2__
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            __m128i special = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                /* bytes below 0x20 or from 0x80 on: signed, they are below 0x20 */
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            int mask = _mm_movemask_epi8(special);
            if (mask) {
                p += __builtin_ctz((unsigned)mask);
                break;
            }
            p += 16;
        }
#endif
        while (p < end && PLAIN[*p])
            p++;
        count += p - run;
        if (p >= end)
            return BAD;
        unsigned char c = *p;
        if (c == '"')
            break;
        if (c < 0x20)
            return BAD;
        if (c == '\\') {
            *escaped = 1;
            if (p + 1 >= end)
                return BAD;
            unsigned char e = p[1];
            if (e == 'u') {
                if (end - p < 6 || !hex(p[2]) || !hex(p[3]) || !hex(p[4]) || !hex(p[5]))
                    return BAD;
                unsigned cp = hex4(p + 2);
                p += 6;
                count++;
                if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' &&
                    p[1] == 'u' && hex(p[2]) && hex(p[3]) && hex(p[4]) && hex(p[5])) {
                    unsigned low = hex4(p + 2);
                    if (low >= 0xDC00 && low <= 0xDFFF)
                        p += 6; /* json joins the pair into one code point */
                }
                continue;
            }
            else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                     e == 'r' || e == 't') {
                p += 2;
                count++;
            }
            else
                return BAD;
            continue;
        }
        int n = utf8_len(p, end);
        if (n == 0)
            return BAD;
        p += n;
        count++;
    }
    *len = p - *body;
    *points = count;
    ps->p = p + 1;
    return OK;
}

/* A number or a constant at ps->p; *plain says it is a whole number of few digits. */
static Status scan_number(Parser *ps, int *plain)
{
    const unsigned char *p = ps->p, *end = ps->end;
    *plain = 0;
    if (p < end && *p == '-')
        p++;
    if (end - p >= 8 && memcmp(p, "Infinity", 8) == 0) {
        ps->p = p + 8;
        return OK;
    }
    if (p >= end)
        return BAD;
    const unsigned char *digits = p;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    else
        return BAD;
    int whole = 1;
    if (p < end && *p == '.') {
        const unsigned char *f = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return BAD;
        whole = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        const unsigned char *q = p + 1;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        const unsigned char *x = q;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q == x) {
            /* json's grammar: "1e" is the number 1 followed by "e" (then refused) */
            ps->p = p;
            *plain = whole && p - digits <= 18;
            return OK;
        }
        p = q;
        whole = 0;
    }
    *plain = whole && p - digits <= 18;
    ps->p = p;
    return OK;
}

static Status skip_value(Parser *ps);

/* One member of a container: an object's key (its bytes, whether escaped) with the
 * parser at its value, or an array's item (name NULL). It consumes the value. */
typedef Status (*Member)(Parser *ps, void *ctx, const unsigned char *name, Py_ssize_t len,
                         int escaped);

/* The object or array at ps->p, each member handed to ``member``: json's grammar of
 * braces, brackets, colons and commas, in one place. */
static Status walk(Parser *ps, void *ctx, Member member)
{
    const int object = *ps->p == '{';
    const unsigned char close = object ? '}' : ']';
    if (++ps->depth > MAX_DEPTH)
        return NOT_SURE;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return OK;
    }
    for (;;) {
        const unsigned char *name = NULL;
        Py_ssize_t len = 0, points;
        int escaped = 0;
        Status st;
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"')
                return BAD;
            if ((st = scan_string(ps, &name, &len, &escaped, &points)) != OK)
                return st;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return BAD;
            ps->p++;
            skip_ws(ps);
        }
        if ((st = member(ps, ctx, name, len, escaped)) != OK)
            return st;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return BAD;
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return OK;
        }
        return BAD;
    }
}

static Status skip_member(Parser *ps, void *ctx, const unsigned char *name, Py_ssize_t len,
                          int escaped)
{
    (void)ctx, (void)name, (void)len, (void)escaped;
    return skip_value(ps);
}

static Status skip_literal(Parser *ps, const char *word, Py_ssize_t n)
{
    if (ps->end - ps->p < n || memcmp(ps->p, word, (size_t)n) != 0)
        return BAD;
    ps->p += n;
    return OK;
}

/* Validate one value (the parser at its first byte, whitespace skipped). */
static Status skip_value(Parser *ps)
{
    if (ps->p >= ps->end)
        return BAD;
    const unsigned char *body;
    Py_ssize_t len, points;
    int flag;
    switch (*ps->p) {
    case '"':
        return scan_string(ps, &body, &len, &flag, &points);
    case '{':
        return walk(ps, NULL, skip_member);
    case '[':
        return walk(ps, NULL, skip_member);
    case 't':
        return skip_literal(ps, "true", 4);
    case 'f':
        return skip_literal(ps, "false", 5);
    case 'n':
        return skip_literal(ps, "null", 4);
    case 'N':
        return skip_literal(ps, "NaN", 3);
    default:
        return scan_number(ps, &flag);
    }
}

/* ---- the fields the reader reads of a line ----
 *
 * One pass over a line's JSON validates it whole and keeps only what ctxrelay's reader
 * (_pass._read) asks of the record it would decode: a few strings (kept as bytes, made
 * str only when used), whether two flags are true, four token counts and two of the
 * nested objects. A key met twice keeps its last value, as in json; a nested object met
 * twice is read anew. */

enum { T_OTHER, T_ASSISTANT, T_SYSTEM, T_USER };
enum { ABSENT = 0, STRING = 1, OTHER = 2 }; /* what a kept value was */

typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    int kind; /* ABSENT (or null), STRING, OTHER */
} Str;

typedef struct {
    Str session_id, version, timestamp, agent_id, request_id;
    int sidechain; /* isSidechain is true */
    int type;      /* T_*: "type" as one of the strings the reader compares it with */
    int boundary;  /* subtype is "compact_boundary" */
    int summary;   /* isCompactSummary is true */
    int meta;      /* compactMetadata is an object, with: */
    int has_pre;
    long long pre;
    Str trigger;
    int message; /* message is an object, with: */
    Str id, model;
    int usage; /* message.usage is an object, with: */
    long long counts[4]; /* input, cache writes, cache reads, output: as_count */
    int cache;           /* usage.cache_creation is an object, with: */
    long long one_hour;
    long long chars; /* message.content's text length (_pass._text_length) */
} Rec;

static int same(const unsigned char *name, Py_ssize_t len, const char *word)
{
    size_t n = strlen(word);
    return (size_t)len == n && memcmp(name, word, n) == 0;
}

/* A kept string: the bytes of a string without escapes (an escape: NOT_SURE). */
static Status kept_str(Parser *ps, Str *out)
{
    if (ps->p < ps->end && *ps->p == '"') {
        Py_ssize_t points;
        int escaped;
        Status st = scan_string(ps, &out->s, &out->n, &escaped, &points);
        if (st != OK)
            return st;
        out->kind = STRING;
        return escaped ? NOT_SURE : OK;
    }
    if (ps->end - ps->p >= 4 && memcmp(ps->p, "null", 4) == 0) {
        ps->p += 4;
        out->kind = ABSENT;
        return OK;
    }
    out->kind = OTHER;
    return skip_value(ps);
}

/* A kept flag: whether the value is true. */
static Status kept_true(Parser *ps, int *out)
{
    *out = ps->end - ps->p >= 4 && memcmp(ps->p, "true", 4) == 0;
    return skip_value(ps);
}

/* A kept count, as _counts.as_count reads it: a whole number above 0, else 0. A float,
 * a constant or a long integer is NOT_SURE (json's own types decide). */
static Status kept_count(Parser *ps, long long *out)
{
    const unsigned char *start = ps->p;
    *out = 0;
    if (ps->p >= ps->end)
        return BAD;
    unsigned char c = *ps->p;
    if (c != '-' && c != 'I' && c != 'N' && (c < '0' || c > '9'))
        return skip_value(ps); /* a string, object, array, bool or null counts 0 */
    if (c == 'N') {
        Status st = skip_value(ps);
        return st == OK ? NOT_SURE : st;
    }
    int plain;
    Status st = scan_number(ps, &plain);
    if (st != OK)
        return st;
    if (!plain)
        return NOT_SURE;
    long long v = 0;
    int negative = *start == '-';
    for (const unsigned char *d = start + negative; d < ps->p; d++)
        v = v * 10 + (*d - '0');
    *out = negative || v <= 0 ? 0 : v;
    return OK;
}

/* message.content's text length (_pass._text_length): a string's length, or the sum of
 * the lengths of the "text" strings of a list's objects (each object's last "text" key
 * decides); anything else 0. */
static Status text_member(Parser *ps, void *ctx, const unsigned char *name, Py_ssize_t len,
                          int escaped)
{
    long long *text = ctx;
    if (escaped)
        return NOT_SURE; /* "te\u0078t" is "text" to json */
    if (!same(name, len, "text"))
        return skip_value(ps);
    *text = 0;
    if (ps->p >= ps->end || *ps->p != '"')
        return skip_value(ps);
    const unsigned char *body;
    Py_ssize_t n, points;
    int quoted;
    Status st = scan_string(ps, &body, &n, &quoted, &points);
    *text = points;
    return st;
}

static Status block_member(Parser *ps, void *ctx, const unsigned char *name, Py_ssize_t len,
                           int escaped)
{
    (void)name, (void)len, (void)escaped;
    if (ps->p >= ps->end || *ps->p != '{')
        return skip_value(ps);
    long long text = 0;
    Status st = walk(ps, &text, text_member);
    *(long long *)ctx += text;
    return st;
}

static Status content_chars(Parser *ps, long long *out)
{
    *out = 0;
    if (ps->p >= ps->end)
        return BAD;
    if (*ps->p == '[')
        return walk(ps, out, block_member);
    if (*ps->p != '"')
        return skip_value(ps);
    const unsigned char *body;
    Py_ssize_t len, points;
    int escaped;
    Status st = scan_string(ps, &body, &len, &escaped, &points);
    *out = points;
    return st;
}

typedef Status (*Field)(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len);

typedef struct {
    Rec *rec;
    Field field;
} Fields;

static Status field_member(Parser *ps, void *ctx, const unsigned char *name, Py_ssize_t len,
                           int escaped)
{
    Fields *fields = ctx;
    if (escaped)
        return NOT_SURE; /* "\u0074ype" is "type" to json */
    return fields->field(ps, fields->rec, name, len);
}

/* An object whose keys ``field`` reads (it skips the others). */
static Status object(Parser *ps, Rec *rec, Field field)
{
    Fields fields = {rec, field};
    return walk(ps, &fields, field_member);
}

static int is_object(Parser *ps) { return ps->p < ps->end && *ps->p == '{'; }

static Status cache_field(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len)
{
    if (same(name, len, "ephemeral_1h_input_tokens"))
        return kept_count(ps, &rec->one_hour);
    return skip_value(ps);
}

static Status usage_field(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len)
{
    static const char *const COUNTS[] = {"input_tokens", "cache_creation_input_tokens",
                                         "cache_read_input_tokens", "output_tokens"};
    for (int i = 0; i < 4; i++)
        if (same(name, len, COUNTS[i]))
            return kept_count(ps, &rec->counts[i]);
    if (same(name, len, "cache_creation")) {
        rec->one_hour = 0;
        rec->cache = is_object(ps);
        return rec->cache ? object(ps, rec, cache_field) : skip_value(ps);
    }
    return skip_value(ps);
}

static Status message_field(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len)
{
    if (same(name, len, "id"))
        return kept_str(ps, &rec->id);
    if (same(name, len, "model"))
        return kept_str(ps, &rec->model);
    if (same(name, len, "usage")) {
        memset(rec->counts, 0, sizeof rec->counts);
        rec->cache = 0;
        rec->one_hour = 0;
        rec->usage = is_object(ps);
        return rec->usage ? object(ps, rec, usage_field) : skip_value(ps);
    }
    if (same(name, len, "content"))
        return content_chars(ps, &rec->chars);
    return skip_value(ps);
}

static Status meta_field(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len)
{
    if (same(name, len, "preTokens")) {
        rec->has_pre = 1;
        return kept_count(ps, &rec->pre);
    }
    if (same(name, len, "trigger"))
        return kept_str(ps, &rec->trigger);
    return skip_value(ps);
}

static Status top_field(Parser *ps, Rec *rec, const unsigned char *name, Py_ssize_t len)
{
    switch (len) {
    case 4:
        if (same(name, len, "type")) {
            Str type;
            Status st = kept_str(ps, &type);
            rec->type = T_OTHER;
            if (type.kind == STRING) {
                if (same(type.s, type.n, "assistant"))
                    rec->type = T_ASSISTANT;
                else if (same(type.s, type.n, "system"))
                    rec->type = T_SYSTEM;
                else if (same(type.s, type.n, "user"))
                    rec->type = T_USER;
            }
            return st;
        }
        break;
    case 7:
        if (same(name, len, "version"))
            return kept_str(ps, &rec->version);
        if (same(name, len, "agentId"))
            return kept_str(ps, &rec->agent_id);
        if (same(name, len, "message")) {
            Rec blank = {0};
            memcpy(&rec->message, &blank.message,
                   sizeof(Rec) - offsetof(Rec, message)); /* a later message is read anew */
            rec->message = is_object(ps);
            return rec->message ? object(ps, rec, message_field) : skip_value(ps);
        }
        if (same(name, len, "subtype")) {
            Str subtype;
            Status st = kept_str(ps, &subtype);
            rec->boundary =
                subtype.kind == STRING && same(subtype.s, subtype.n, "compact_boundary");
            return st;
        }
        break;
    case 9:
        if (same(name, len, "sessionId"))
            return kept_str(ps, &rec->session_id);
        if (same(name, len, "timestamp"))
            return kept_str(ps, &rec->timestamp);
        if (same(name, len, "requestId"))
            return kept_str(ps, &rec->request_id);
        break;
    case 11:
        if (same(name, len, "isSidechain"))
            return kept_true(ps, &rec->sidechain);
        break;
    case 15:
        if (same(name, len, "compactMetadata")) {
            rec->has_pre = 0;
            rec->pre = 0;
            rec->trigger.kind = ABSENT;
            rec->meta = is_object(ps);
            return rec->meta ? object(ps, rec, meta_field) : skip_value(ps);
        }
        break;
    case 16:
        if (same(name, len, "isCompactSummary"))
            return kept_true(ps, &rec->summary);
        break;
    }
    return skip_value(ps);
}

/* The record of one whole document, as json.loads(bytes) would read it. */
static Status document(const unsigned char *doc, Py_ssize_t len, Rec *rec)
{
    memset(rec, 0, sizeof *rec);
    if (len < 4 || doc[0] != '{' || memchr(doc, 0, 4) != NULL)
        return NOT_SURE; /* json would detect an encoding, or strip a BOM: its call */
    Parser ps = {doc, doc + len, 0};
    Status st = object(&ps, rec, top_field);
    if (st == OK) {
        skip_ws(&ps);
        if (ps.p != ps.end)
            st = BAD;
    }
    return st;
}

/* The record of a usage line: its splice first (the line without its message.content,
 * as _pass._spliced cuts it), the whole line when the splice does not parse. The
 * strings of ``rec`` point into ``*scratch`` or ``data``. */
static Status usage_line(const char *data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t needle,
                         Rec *rec, unsigned char **scratch, Py_ssize_t *room)
{
    Py_ssize_t at = find(data, start, needle, MESSAGE, LEN(MESSAGE));
    Py_ssize_t content = at == -1 ? -1 : find(data, at, needle, CONTENT, LEN(CONTENT));
    Py_ssize_t after =
        content == -1 ? -1 : rfind(data, content, needle, CONTENT_END, LEN(CONTENT_END));
    if (after != -1) {
        Py_ssize_t head = content + LEN(CONTENT) - start, tail = end - after;
        if (head + tail > *room) {
            unsigned char *grown = PyMem_Realloc(*scratch, (size_t)(head + tail));
            if (grown == NULL) {
                PyErr_NoMemory();
                return FAILED;
            }
            *scratch = grown;
            *room = head + tail;
        }
        memcpy(*scratch, data + start, (size_t)head);
        memcpy(*scratch + head, data + after, (size_t)tail);
        Status st = document(*scratch, head + tail, rec);
        if (st != BAD)
            return st;
    }
    return document((const unsigned char *)data + start, end - start, rec);
}

/* ---- the pass: _pass._read, in C ---- */

static PyObject *str_of(const Str *s)
{
    if (s->kind != STRING)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8((const char *)s->s, s->n, "surrogatepass");
}

static PyObject *usage_tuple(const Rec *rec)
{
    long long created = rec->counts[1];
    long long one_hour = rec->cache ? (rec->one_hour < created ? rec->one_hour : created) : 0;
    return Py_BuildValue("(LLLLL)", rec->counts[0], created, rec->counts[2], rec->counts[3],
                         one_hour);
}

static const char SYNTHETIC[] = "<synthetic>"; /* _counts.SYNTHETIC_MODEL */

static int synthetic_model(const Rec *rec)
{
    return rec->model.kind == STRING && same(rec->model.s, rec->model.n, SYNTHETIC);
}

typedef struct {
    PyObject *entries;   /* message id -> [id, model, usage, sidechain, segment, ...] */
    PyObject *compactions; /* [(pre, trigger, after, chars, timestamp)] */
    PyObject *synthetic; /* {message id as str()} */
    PyObject *session_id, *version;
    long long main_count, segment, malformed;
    int awaiting_summary;
} Pass;

/* One decoded record, as _pass._read's loop body reads it. 0; 1 when only Python can
 * say (str() of a synthetic response's odd id); -1 with an error set. */
static int take(Pass *ps, const Rec *rec, int agent)
{
    if (ps->session_id == Py_None) {
        PyObject *sid = str_of(&rec->session_id), *version = str_of(&rec->version);
        if (sid == NULL || version == NULL) {
            Py_XDECREF(sid);
            Py_XDECREF(version);
            return -1;
        }
        Py_SETREF(ps->session_id, sid);
        Py_SETREF(ps->version, version);
    }
    int sidechain = !agent && rec->sidechain;
    if (rec->type == T_ASSISTANT) {
        if (!rec->message)
            return 0;
        PyObject *key = NULL, *seen = NULL;
        if (rec->id.kind == STRING) {
            key = str_of(&rec->id);
            if (key == NULL)
                return -1;
            seen = PyDict_GetItemWithError(ps->entries, key);
            if (seen == NULL && PyErr_Occurred()) {
                Py_DECREF(key);
                return -1;
            }
        }
        if (seen != NULL) {
            /* a later line of a response already read: only a larger output changes it */
            int done = 0;
            PyObject *old = PyList_GET_ITEM(seen, 2);
            long long output = PyLong_AsLongLong(PyTuple_GET_ITEM(old, 3));
            if (rec->usage && !synthetic_model(rec) && rec->counts[3] >= output) {
                PyObject *usage = usage_tuple(rec);
                done = usage == NULL ? -1 : PyList_SetItem(seen, 2, usage);
            }
            Py_DECREF(key);
            return done;
        }
        if (key == NULL || PyUnicode_GET_LENGTH(key) == 0 || synthetic_model(rec) ||
            !rec->usage) {
            /* not a real request (_pass.raw_response) */
            int done = 0;
            if (synthetic_model(rec) && rec->id.kind == OTHER) {
                Py_XDECREF(key);
                return 1;
            }
            if (synthetic_model(rec)) {
                PyObject *name = key != NULL ? Py_NewRef(key) : PyUnicode_FromString("None");
                done = name == NULL ? -1 : PySet_Add(ps->synthetic, name);
                Py_XDECREF(name);
            }
            Py_XDECREF(key);
            return done;
        }
        PyObject *entry = Py_BuildValue("[ONNONNNN]", key, str_of(&rec->model), usage_tuple(rec),
                                        sidechain ? Py_True : Py_False,
                                        PyLong_FromLongLong(ps->segment), str_of(&rec->timestamp),
                                        str_of(&rec->agent_id), str_of(&rec->request_id));
        int done = entry == NULL ? -1 : PyDict_SetItem(ps->entries, key, entry);
        Py_XDECREF(entry);
        Py_DECREF(key);
        if (done == 0 && !sidechain)
            ps->main_count++;
        return done;
    }
    if (rec->type == T_SYSTEM && rec->boundary) {
        if (sidechain)
            return 0;
        PyObject *pre = Py_NewRef(Py_None), *trigger = Py_NewRef(Py_None);
        if (rec->meta) {
            if (rec->has_pre)
                Py_SETREF(pre, PyLong_FromLongLong(rec->pre));
            Py_SETREF(trigger, str_of(&rec->trigger));
        }
        PyObject *item = pre == NULL || trigger == NULL
                             ? NULL
                             : Py_BuildValue("(OOLiN)", pre, trigger, ps->main_count, 0,
                                             str_of(&rec->timestamp));
        Py_XDECREF(pre);
        Py_XDECREF(trigger);
        int done = item == NULL ? -1 : PyList_Append(ps->compactions, item);
        Py_XDECREF(item);
        ps->segment++;
        ps->awaiting_summary = 1;
        return done;
    }
    if (rec->type == T_USER && ps->awaiting_summary && rec->summary) {
        Py_ssize_t last = PyList_GET_SIZE(ps->compactions) - 1;
        PyObject *old = PyList_GET_ITEM(ps->compactions, last);
        PyObject *item = Py_BuildValue(
            "(OOOLO)", PyTuple_GET_ITEM(old, 0), PyTuple_GET_ITEM(old, 1),
            PyTuple_GET_ITEM(old, 2), rec->message ? rec->chars : 0, PyTuple_GET_ITEM(old, 4));
        if (item == NULL || PyList_SetItem(ps->compactions, last, item) < 0)
            return -1;
        ps->awaiting_summary = 0;
    }
    return 0;
}

/* read(data, agent) -> (session id, version, responses, compactions, lines decoded,
 * malformed lines, synthetic responses), as _pass._read returns them after its path;
 * None when a line needs json's own judgement (the caller reads the file in Python). */
static PyObject *read_pass(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *buffer;
    int agent;
    if (!PyArg_ParseTuple(args, "Op:read", &buffer, &agent))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *data = view.buf;
    Py_ssize_t size = view.len;
    Spans spans = {NULL, 0, 0};
    unsigned char *scratch = NULL;
    Py_ssize_t room = 0;
    PyObject *result = NULL;
    Pass ps = {PyDict_New(), PyList_New(0), PySet_New(NULL), Py_NewRef(Py_None),
               Py_NewRef(Py_None), 0, 0, 0, 0};
    if (ps.entries == NULL || ps.compactions == NULL || ps.synthetic == NULL ||
        find_spans(&spans, data, size) < 0)
        goto done;
    Rec rec;
    for (Py_ssize_t i = 0; i < spans.len; i++) {
        Span *sp = &spans.items[i];
        Status st;
        if (sp->needle == -1 && !ps.awaiting_summary && sp->end != size &&
            find(data, sp->start, sp->end, BOUNDARY, LEN(BOUNDARY)) == -1)
            continue; /* "isCompactSummary" or a boundary's name alone, before a boundary */
        if (sp->needle != -1)
            st = usage_line(data, sp->start, sp->end, sp->needle, &rec, &scratch, &room);
        else
            st = document((const unsigned char *)data + sp->start, sp->end - sp->start, &rec);
        if (st == FAILED)
            goto done;
        if (st == NOT_SURE) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (st == BAD) {
            ps.malformed++;
            continue;
        }
        int taken = take(&ps, &rec, agent);
        if (taken < 0)
            goto done;
        if (taken > 0) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    PyObject *responses = PyList_New(0);
    if (responses == NULL)
        goto done;
    PyObject *key, *entry;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ps.entries, &pos, &key, &entry)) {
        PyObject *t = PyList_AsTuple(entry);
        if (t == NULL || PyList_Append(responses, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(responses);
            goto done;
        }
        Py_DECREF(t);
    }
    result = Py_BuildValue("(OONOnLn)", ps.session_id, ps.version, responses, ps.compactions,
                           spans.len, ps.malformed, PySet_GET_SIZE(ps.synthetic));
done:
    Py_XDECREF(ps.entries);
    Py_XDECREF(ps.compactions);
    Py_XDECREF(ps.synthetic);
    Py_XDECREF(ps.session_id);
    Py_XDECREF(ps.version);
    PyMem_Free(spans.items);
    PyMem_Free(scratch);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"spans", spans, METH_O, "(start, end, usage at or -1) of the lines that can matter."},
    {"read", read_pass, METH_VARARGS,
     "read(data, agent) -> _pass._read's result after its path, or None when a line "
     "needs json's own judgement."},
    {NULL, NULL, 0, NULL}};

static int exec_module(PyObject *module)
{
    (void)module;
    init_plain();
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    return 0;
}

static PyModuleDef_Slot slots[] = {{Py_mod_exec, exec_module}, {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ctxrelay.transcripts._native",
    "The analyzer reader's forward pass in C (ctxrelay.transcripts._pass is the reference).",
    0, methods, slots, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&module_def); }
