/* Text of the C walk: str.isspace(), len(str.strip()), " ".join(str.split()) and
 * _extract_dom._flush, with Python's own notion of white space (Py_UNICODE_ISSPACE). */
#include "walk.h"

/* text.isspace() of a non-empty str. */
int
text_isspace(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (n == 0)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            return 0;
    return 1;
}

/* The bounds [*lo, *hi) of text.strip() (the scorer's too: score_choose.c) */
void
text_strip_bounds(PyObject *text, Py_ssize_t *lo, Py_ssize_t *hi)
{
    Py_ssize_t start = 0, end = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    while (start < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start)))
        start++;
    while (end > start && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)))
        end--;
    *lo = start;
    *hi = end;
}

/* len(text.strip()) */
Py_ssize_t
text_stripped_len(PyObject *text)
{
    Py_ssize_t lo, hi;
    text_strip_bounds(text, &lo, &hi);
    return hi - lo;
}

/* " ".join(text.split()), a new reference. */
PyObject *
text_collapse(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), w = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    /* Written in the string's own kind; PyUnicode_FromKindAndData narrows the result
     * when only wide spaces made it wide, as str.join would. */
    void *out = PyMem_Malloc(n ? (size_t)n * (size_t)kind : 1);
    if (out == NULL)
        return PyErr_NoMemory();
    int pending = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(ch)) {
            pending = w > 0;
            continue;
        }
        if (pending) {
            PyUnicode_WRITE(kind, out, w, ' ');
            w++;
            pending = 0;
        }
        PyUnicode_WRITE(kind, out, w, ch);
        w++;
    }
    PyObject *result = PyUnicode_FromKindAndData(kind, out, w);
    PyMem_Free(out);
    return result;
}

static int
add_line(walk_state *st, PyObject *text, int64_t owner, int64_t charged)
{
    if (st->nlines == st->lcap) {
        Py_ssize_t cap = st->lcap ? 2 * st->lcap : 64;
        int64_t *o = PyMem_Realloc(st->line_owner, (size_t)cap * sizeof(int64_t));
        if (o == NULL)
            return W_ERROR;
        st->line_owner = o;
        int64_t *l = PyMem_Realloc(st->line_links, (size_t)cap * sizeof(int64_t));
        if (l == NULL)
            return W_ERROR;
        st->line_links = l;
        st->lcap = cap;
    }
    if (PyList_Append(st->line_text, text) < 0)
        return W_ERROR;
    st->line_owner[st->nlines] = owner;
    st->line_links[st->nlines] = charged;
    st->nlines++;
    return 0;
}

/* One chunk of _flush: collapsed, recorded when not empty; *links is what is left of
 * the link text to charge. */
static int
flush_chunk(walk_state *st, PyObject *chunk, int64_t *links)
{
    int collapsed = native_collapsed(chunk);
    if (collapsed < 0)
        return W_ERROR;
    PyObject *text = collapsed ? Py_NewRef(chunk) : text_collapse(chunk);
    if (text == NULL)
        return W_ERROR;
    int64_t len = (int64_t)PyUnicode_GET_LENGTH(text);
    int rc = 0;
    if (len > 0) {
        int64_t charged = *links < len ? *links : len;
        *links -= charged;
        elem *e = &st->el[st->owner];
        rc = add_line(st, text, st->owner, charged);
        e->chars += len;
        e->links += charged;
    }
    Py_DECREF(text);
    return rc;
}

/* _flush: the pieces become lines of the current owner (one per "\n" in a <pre>). */
int
flush_line(walk_state *st, int in_pre)
{
    /* The Python walk would index its lists with a negative owner: not reproduced. */
    if (st->owner < 0 || st->owner >= st->n)
        return W_BAIL;
    PyObject *raw = PyUnicode_Join(st->w->empty, st->pieces);
    if (raw == NULL)
        return W_ERROR;
    int rc = PyList_SetSlice(st->pieces, 0, PyList_GET_SIZE(st->pieces), NULL);
    int64_t links = st->link_len;
    if (rc == 0 && !in_pre) {
        rc = flush_chunk(st, raw, &links);
    }
    else if (rc == 0) {
        PyObject *chunks = PyUnicode_Split(raw, st->w->newline, -1);
        if (chunks == NULL)
            rc = W_ERROR;
        for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(chunks); i++)
            rc = flush_chunk(st, PyList_GET_ITEM(chunks, i), &links);
        Py_XDECREF(chunks);
    }
    Py_DECREF(raw);
    return rc;
}
