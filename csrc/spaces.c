/* White-space checks and collapsing of a page's text, the per-line and per-page loops of
 * the parse worker (trawl/parse/_extract_dom.py, trawl/parse/page.py).
 *
 * CPython's search for "  " in a text full of single spaces tests every position (the
 * needle's last character is everywhere): a check of a line cost more than the rest of
 * its handling. One pass over the string's own buffer here. */
#include "native.h"

/* str.isspace() of an ASCII character: \t \n \v \f \r, 0x1c to 0x1f and space. */
static const unsigned char ascii_space[128] = {
    [9] = 1, [10] = 1, [11] = 1, [12] = 1, [13] = 1,
    [28] = 1, [29] = 1, [30] = 1, [31] = 1, [32] = 1,
};

/* Python's str.isspace() of one character. */
#define IS_SPACE(ch) Py_UNICODE_ISSPACE(ch)

/* The characters whose presence means a line is not collapsed, besides "  ". */
static inline int
breaks_line(Py_UCS4 ch)
{
    return ch == '\n' || ch == '\t' || ch == '\r' || ch == 0xa0 || ch == '\f' || ch == '\v';
}

/* is_collapsed(text) -> bool: as trawl.parse._extract_dom._is_collapsed_py. */
PyObject *
native_is_collapsed(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "is_collapsed() takes a str");
        return NULL;
    }
    int collapsed = native_collapsed(arg);
    if (collapsed < 0)
        return NULL;
    return PyBool_FromLong(collapsed);
}

/* The same on a str (1 or 0; -1 with an exception), for the C walk (walk_text.c). */
int
native_collapsed(PyObject *arg)
{
    if (PyUnicode_READY(arg) < 0)
        return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    if (n == 0)
        return 0;
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    if (IS_SPACE(PyUnicode_READ(kind, data, 0)) || IS_SPACE(PyUnicode_READ(kind, data, n - 1)))
        return 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        /* Branch-free, so the compiler vectorises it: \t \n \v \f \r are 9 to 13. */
        const Py_UCS1 *s = (const Py_UCS1 *)data;
        /* Byte-wide throughout: widened to int, SSE2 handles 4 bytes an instruction. */
        uint8_t bad = 0;
        for (Py_ssize_t i = 0; i + 1 < n; i++) {
            uint8_t a = s[i], b = s[i + 1];
            bad |= ((uint8_t)(a - 9) < 5) | (a == 0xa0) | ((a == ' ') & (b == ' '));
        }
        uint8_t last = s[n - 1];
        bad |= ((uint8_t)(last - 9) < 5) | (last == 0xa0);
        return !bad;
    }
    int space = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch == ' ') {
            if (space)
                return 0;
            space = 1;
            continue;
        }
        space = 0;
        if (breaks_line(ch))
            return 0;
    }
    return 1;
}

/* ascii_words(text) -> bytes | None: for an ASCII str, the bytes of
 * " ".join(text.split()) (every str.isspace() character a separator); None for any
 * other str. */
PyObject *
native_ascii_words(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "ascii_words() takes a str");
        return NULL;
    }
    if (PyUnicode_READY(arg) < 0)
        return NULL;
    if (!PyUnicode_IS_ASCII(arg))
        Py_RETURN_NONE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(arg);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        return NULL;
    char *o = PyBytes_AS_STRING(out);
    /* The common text, lines of single-spaced words joined by newlines, in two passes
     * the compiler vectorises: a check that every white space is one space or newline
     * between words and no other control character is there (a stricter test than
     * needed, and cheaper: the loop below handles the rest), then a copy with the
     * newlines made spaces. */
    if (n > 0) {
        uint8_t odd = ascii_space[s[0]] | ascii_space[s[n - 1]];
        for (Py_ssize_t i = 0; i + 1 < n; i++) {
            uint8_t a = s[i], b = s[i + 1];
            uint8_t sa = (a == ' ') | (a == '\n'), sb = (b == ' ') | (b == '\n');
            odd |= (sa & sb) | ((a < 32) & (a != '\n'));
        }
        if (!odd) {
            for (Py_ssize_t i = 0; i < n; i++)
                o[i] = (char)(s[i] == '\n' ? ' ' : s[i]);
            return out;
        }
    }
    /* Branch-free (words and spaces alternate every few bytes, which a branch would
     * mispredict): the owed separator and the byte are always stored, and counted only
     * when due. Both stores stay below i + 1 <= n. */
    Py_ssize_t w = 0;
    unsigned pending = 0; /* a separator is owed before the next word */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS1 ch = s[i];
        unsigned word = !ascii_space[ch];
        o[w] = ' ';
        w += pending & word;
        o[w] = (char)ch;
        w += word;
        pending = word ? 0u : (w != 0);
    }
    if (w != n && _PyBytes_Resize(&out, w) < 0)
        return NULL;
    return out;
}
