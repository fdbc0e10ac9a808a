/* The analyzer reader's two hot loops in C: finding the lines that can matter, and
 * decoding a response's line into the few fields the reader reads.
 *
 * ctxrelay.transcripts._pass is the reference and the fallback: this module is an
 * optional accelerator (built when a C compiler is there, see hatch_build.py) and
 * answers exactly as the Python code does, or says it cannot be sure and lets the
 * Python code answer. tests/transcripts/test_native.py holds the two to the same
 * output, on the real corpus and on generated lines.
 *
 *   spans(data) -> list[tuple[int, int, int]]
 *       _pass._spans(data): (start, end, usage at or -1) of the lines that can matter.
 *   usage_record(data, start, end, needle) -> dict | None | UNSURE
 *       The record _pass reads from the usage line data[start:end] (needle: where its
 *       '"output_tokens":' is), pruned to the keys the reader looks at; None when the
 *       line is not a JSON object (json.loads refuses it, or it is another value);
 *       UNSURE when only json.loads can tell (an escape in a key or a kept string, a
 *       kept number that is not a plain integer, deep nesting, an encoding json would
 *       detect, a compaction's keys): the caller decodes the line in Python.
 *
 * The decoder accepts exactly what json.loads(bytes) accepts: the bytes are UTF-8
 * (surrogates allowed, as json's 'surrogatepass'), strings hold no control character
 * and only JSON's escapes, numbers follow JSON's grammar, NaN/Infinity/-Infinity are
 * values, whitespace is ' \t\n\r', nothing follows the value. A key met twice keeps
 * its last value, as in json.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 256 /* deeper than this, json's recursion limit decides: UNSURE */

static PyObject *UNSURE; /* the module's UNSURE sentinel */

/* ---- byte searches with Python's bytes.find / rfind semantics ---- */

/* First index of needle in hay[from:to], or -1. With SSE2, 16 positions at a time are
 * kept only where both the needle's first and its last byte match (the needles here
 * begin with a quote and end with a colon, brace or bracket: rare together), and only
 * those are compared whole; glibc's memmem is the generic algorithm, several times
 * slower on these inputs. */
static Py_ssize_t find(const char *hay, Py_ssize_t from, Py_ssize_t to, const char *needle,
                       Py_ssize_t n)
{
    if (to - from < n)
        return -1;
    Py_ssize_t i = from, last = to - n; /* the last position a match can start at */
#ifdef __SSE2__
    const __m128i first = _mm_set1_epi8(needle[0]), tail = _mm_set1_epi8(needle[n - 1]);
    for (; i + 15 <= last; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(hay + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(hay + i + n - 1));
        unsigned mask = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, tail)));
        while (mask) {
            int bit = __builtin_ctz(mask);
            if (memcmp(hay + i + bit + 1, needle + 1, (size_t)(n - 2)) == 0)
                return i + bit;
            mask &= mask - 1;
        }
    }
#endif
    if (i > last)
        return -1;
    const char *at = memmem(hay + i, (size_t)(to - i), needle, (size_t)n);
    return at == NULL ? -1 : (Py_ssize_t)(at - hay);
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
                         const char *needle, Py_ssize_t n, int rank, int keep_needle)
{
    Py_ssize_t at = find(data, from, size, needle, n);
    while (at != -1) {
        Py_ssize_t start = line_start(data, at), end = line_end(data, at, size);
        if (push(s, start, end, keep_needle ? at : -1, rank) < 0)
            return -1;
        at = find(data, end, size, needle, n);
    }
    return 0;
}

static PyObject *spans(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *data = view.buf;
    Py_ssize_t size = view.len;
    Spans s = {NULL, 0, 0};
    PyObject *out = NULL;
    if (push_lines_of(&s, data, size, 0, USAGE, LEN(USAGE), 0, 1) < 0)
        goto done;
    if (size && data[size - 1] != '\n') {
        /* an unterminated last line is decoded whatever it holds */
        if (push(&s, line_start(data, size), size, -1, 1) < 0)
            goto done;
    }
    Py_ssize_t first = find(data, 0, size, BOUNDARY, LEN(BOUNDARY));
    if (first != -1) {
        if (push_lines_of(&s, data, size, first, BOUNDARY, LEN(BOUNDARY), 2, 0) < 0 ||
            push_lines_of(&s, data, size, first, SUMMARY, LEN(SUMMARY), 3, 0) < 0)
            goto done;
    }
    if (s.len)
        qsort(s.items, (size_t)s.len, sizeof(Span), by_start);
    out = PyList_New(0);
    if (out == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < s.len; i++) {
        Span *sp = &s.items[i];
        if (i && sp->start == s.items[i - 1].start)
            continue;
        PyObject *t = Py_BuildValue("(nnn)", sp->start, sp->end, sp->needle);
        if (t == NULL || PyList_Append(out, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(t);
    }
done:
    PyMem_Free(s.items);
    PyBuffer_Release(&view);
    return out;
}

/* ---- the pruned decoder ---- */

typedef enum { OK = 0, BAD = -1, NOT_SURE = -2, FAILED = -3 } Status;
/* BAD: json.loads refuses the document. NOT_SURE: only json.loads can tell.
 * FAILED: a Python error is set (out of memory). */

typedef struct Schema Schema;
typedef struct {
    const char *name;
    Py_ssize_t len;
    const Schema *sub; /* NULL: a scalar kept as json gives it */
    int unsure;        /* the key's presence alone sends the line to Python */
    int slot;          /* its interned str in NAMES, made once */
} Key;
struct Schema {
    const Key *keys;
    int n;
};

#define KEY(s, i) {s, LEN(s), NULL, 0, i}
#define SUB(s, schema, i) {s, LEN(s), &schema, 0, i}
#define PUNT(s) {s, LEN(s), NULL, 1, -1}

static const Key CACHE_KEYS[] = {KEY("ephemeral_1h_input_tokens", 0)};
static const Schema CACHE = {CACHE_KEYS, 1};
static const Key USAGE_KEYS[] = {
    KEY("input_tokens", 1), KEY("cache_creation_input_tokens", 2),
    KEY("cache_read_input_tokens", 3), KEY("output_tokens", 4),
    SUB("cache_creation", CACHE, 5)};
static const Schema USAGE_SCHEMA = {USAGE_KEYS, 5};
static const Key MESSAGE_KEYS[] = {KEY("id", 6), KEY("model", 7),
                                   SUB("usage", USAGE_SCHEMA, 8)};
static const Schema MESSAGE_SCHEMA = {MESSAGE_KEYS, 3};
static const Key TOP_KEYS[] = {
    KEY("sessionId", 9), KEY("version", 10), KEY("isSidechain", 11), KEY("type", 12),
    KEY("timestamp", 13), KEY("agentId", 14), KEY("requestId", 15), KEY("subtype", 16),
    SUB("message", MESSAGE_SCHEMA, 17),
    /* a compaction's lines are read whole by _pass (their metadata, the summary text) */
    PUNT("compactMetadata"), PUNT("isCompactSummary")};
static const Schema TOP = {TOP_KEYS, 11};
#define N_NAMES 18
static PyObject *NAMES[N_NAMES];

static int make_names(void)
{
    const Schema *all[] = {&CACHE, &USAGE_SCHEMA, &MESSAGE_SCHEMA, &TOP};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        for (int j = 0; j < all[i]->n; j++) {
            const Key *k = &all[i]->keys[j];
            if (k->slot < 0 || NAMES[k->slot] != NULL)
                continue;
            NAMES[k->slot] = PyUnicode_InternFromString(k->name);
            if (NAMES[k->slot] == NULL)
                return -1;
        }
    return 0;
}

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

/* The string at ps->p (its opening quote); sets *escaped when it holds an escape. */
static Status scan_string(Parser *ps, const unsigned char **body, Py_ssize_t *len,
                          int *escaped)
{
    const unsigned char *p = ps->p + 1, *end = ps->end;
    *escaped = 0;
    *body = p;
    for (;;) {
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
                p += 6;
            }
            else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                     e == 'r' || e == 't')
                p += 2;
            else
                return BAD;
            continue;
        }
        int n = utf8_len(p, end);
        if (n == 0)
            return BAD;
        p += n;
    }
    *len = p - *body;
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

static Status skip_container(Parser *ps, unsigned char close, int object)
{
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
        Status st;
        if (object) {
            const unsigned char *body;
            Py_ssize_t len;
            int escaped;
            if (ps->p >= ps->end || *ps->p != '"')
                return BAD;
            if ((st = scan_string(ps, &body, &len, &escaped)) != OK)
                return st;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return BAD;
            ps->p++;
            skip_ws(ps);
        }
        if ((st = skip_value(ps)) != OK)
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
    Py_ssize_t len;
    int flag;
    switch (*ps->p) {
    case '"':
        return scan_string(ps, &body, &len, &flag);
    case '{':
        return skip_container(ps, '}', 1);
    case '[':
        return skip_container(ps, ']', 0);
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

static Status pruned_object(Parser *ps, const Schema *schema, PyObject **out);

/* A kept value: strings, plain integers and the three literals as json gives them; an
 * object under a schema pruned; any other object or array as an empty one of its kind
 * (the reader only asks what kind it is). */
static Status kept_value(Parser *ps, const Schema *sub, PyObject **out)
{
    const unsigned char *start = ps->p;
    Status st;
    if (ps->p >= ps->end)
        return BAD;
    switch (*ps->p) {
    case '"': {
        const unsigned char *body;
        Py_ssize_t len;
        int escaped;
        if ((st = scan_string(ps, &body, &len, &escaped)) != OK)
            return st;
        if (escaped)
            return NOT_SURE;
        *out = PyUnicode_DecodeUTF8((const char *)body, len, "surrogatepass");
        return *out == NULL ? FAILED : OK;
    }
    case '{':
        if (sub != NULL)
            return pruned_object(ps, sub, out);
        if ((st = skip_value(ps)) != OK)
            return st;
        *out = PyDict_New();
        return *out == NULL ? FAILED : OK;
    case '[':
        if ((st = skip_value(ps)) != OK)
            return st;
        *out = PyList_New(0);
        return *out == NULL ? FAILED : OK;
    case 't':
        if ((st = skip_literal(ps, "true", 4)) != OK)
            return st;
        *out = Py_NewRef(Py_True);
        return OK;
    case 'f':
        if ((st = skip_literal(ps, "false", 5)) != OK)
            return st;
        *out = Py_NewRef(Py_False);
        return OK;
    case 'n':
        if ((st = skip_literal(ps, "null", 4)) != OK)
            return st;
        *out = Py_NewRef(Py_None);
        return OK;
    case 'N':
        if ((st = skip_literal(ps, "NaN", 3)) != OK)
            return st;
        return NOT_SURE; /* json's float('nan') */
    default: {
        int plain;
        if ((st = scan_number(ps, &plain)) != OK)
            return st;
        if (!plain)
            return NOT_SURE; /* a float, a constant, a long integer: json's own types */
        char digits[24];
        Py_ssize_t n = ps->p - start;
        memcpy(digits, start, (size_t)n);
        digits[n] = 0;
        *out = PyLong_FromLongLong(strtoll(digits, NULL, 10));
        return *out == NULL ? FAILED : OK;
    }
    }
}

static const Key *lookup(const Schema *schema, const unsigned char *name, Py_ssize_t len)
{
    for (int i = 0; i < schema->n; i++) {
        const Key *k = &schema->keys[i];
        if (k->len == len && memcmp(k->name, name, (size_t)len) == 0)
            return k;
    }
    return NULL;
}

static Status pruned_object(Parser *ps, const Schema *schema, PyObject **out)
{
    if (++ps->depth > MAX_DEPTH)
        return NOT_SURE;
    PyObject *dict = PyDict_New();
    if (dict == NULL)
        return FAILED;
    Status st;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        goto closed;
    }
    for (;;) {
        const unsigned char *name;
        Py_ssize_t len;
        int escaped;
        if (ps->p >= ps->end || *ps->p != '"') {
            st = BAD;
            goto fail;
        }
        if ((st = scan_string(ps, &name, &len, &escaped)) != OK)
            goto fail;
        if (escaped) { /* "\u0074ype" is "type" to json */
            st = NOT_SURE;
            goto fail;
        }
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') {
            st = BAD;
            goto fail;
        }
        ps->p++;
        skip_ws(ps);
        const Key *key = lookup(schema, name, len);
        if (key != NULL && key->unsure) {
            st = NOT_SURE;
            goto fail;
        }
        if (key == NULL) {
            if ((st = skip_value(ps)) != OK)
                goto fail;
        }
        else {
            PyObject *value = NULL;
            if ((st = kept_value(ps, key->sub, &value)) != OK)
                goto fail;
            int bad = PyDict_SetItem(dict, NAMES[key->slot], value) < 0;
            Py_DECREF(value);
            if (bad) {
                st = FAILED;
                goto fail;
            }
        }
        skip_ws(ps);
        if (ps->p >= ps->end) {
            st = BAD;
            goto fail;
        }
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (*ps->p == '}') {
            ps->p++;
            break;
        }
        st = BAD;
        goto fail;
    }
closed:
    ps->depth--;
    *out = dict;
    return OK;
fail:
    Py_DECREF(dict);
    return st;
}

/* The pruned record of one whole document, as json.loads(bytes) would read it. */
static Status document(const unsigned char *doc, Py_ssize_t len, PyObject **out)
{
    *out = NULL;
    if (len < 4 || doc[0] != '{' || memchr(doc, 0, 4) != NULL)
        return NOT_SURE; /* json would detect an encoding, or strip a BOM: its call */
    Parser ps = {doc, doc + len, 0};
    Status st = pruned_object(&ps, &TOP, out);
    if (st == OK) {
        skip_ws(&ps);
        if (ps.p != ps.end) {
            Py_CLEAR(*out);
            st = BAD;
        }
    }
    return st;
}

static PyObject *usage_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "usage_record(data, start, end, needle)");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), end = PyLong_AsSsize_t(args[2]),
               needle = PyLong_AsSsize_t(args[3]);
    PyObject *result = NULL;
    if (PyErr_Occurred())
        goto done;
    if (start < 0 || end > view.len || start > end || needle < start || needle > end) {
        PyErr_SetString(PyExc_ValueError, "usage_record: the span is outside the data");
        goto done;
    }
    const char *data = view.buf;
    Status st = BAD;
    /* the splice first: the line without its message.content (see _pass._spliced) */
    Py_ssize_t at = find(data, start, needle, MESSAGE, LEN(MESSAGE));
    Py_ssize_t content = at == -1 ? -1 : find(data, at, needle, CONTENT, LEN(CONTENT));
    Py_ssize_t after =
        content == -1 ? -1 : rfind(data, content, needle, CONTENT_END, LEN(CONTENT_END));
    if (after != -1) {
        Py_ssize_t head = content + LEN(CONTENT) - start, tail = end - after;
        unsigned char *doc = PyMem_Malloc((size_t)(head + tail));
        if (doc == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        memcpy(doc, data + start, (size_t)head);
        memcpy(doc + head, data + after, (size_t)tail);
        st = document(doc, head + tail, &result);
        PyMem_Free(doc);
    }
    if (st == BAD) /* no splice, or one that does not parse: the whole line */
        st = document((const unsigned char *)data + start, end - start, &result);
    if (st == NOT_SURE)
        result = Py_NewRef(UNSURE);
    else if (st == BAD)
        result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"spans", spans, METH_O, "(start, end, usage at or -1) of the lines that can matter."},
    {"usage_record", (PyCFunction)(void (*)(void))usage_record, METH_FASTCALL,
     "The pruned record of a usage line; None when it is not a JSON object; UNSURE "
     "when only json.loads can tell."},
    {NULL, NULL, 0, NULL}};

static int exec_module(PyObject *module)
{
    init_plain();
    if (make_names() < 0)
        return -1;
    UNSURE = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (UNSURE == NULL)
        return -1;
    return PyModule_AddObjectRef(module, "UNSURE", UNSURE);
}

static PyModuleDef_Slot slots[] = {{Py_mod_exec, exec_module}, {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ctxrelay.transcripts._native",
    "The analyzer reader's hot loops in C (ctxrelay.transcripts._pass is the reference).",
    0, methods, slots};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&module_def); }
