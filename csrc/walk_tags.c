/* Tag names of the C walk: each name decoded and classified once with the Python
 * tables (_extract_dom._KIND and friends), then found by its bytes. */
#include "walk.h"

#include <string.h>

/* The counter field a dict maps name to, or -1; -2 with an exception. */
static int
field_of(PyObject *table, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(table, name);
    if (v == NULL)
        return PyErr_Occurred() ? -2 : -1;
    long field = PyLong_AsLong(v);
    if (field == -1 && PyErr_Occurred())
        return -2;
    if (field < 0 || field >= N_COUNTERS) {
        PyErr_SetString(PyExc_ValueError, "counter field out of range");
        return -2;
    }
    return (int)field;
}

/* info from the decoded name (a new reference is taken). */
int
tag_info_fill(Walker *w, PyObject *name, tag_info *info)
{
    PyObject *k = PyDict_GetItemWithError(w->kind, name);
    long kind = K_INLINE;
    if (k == NULL && PyErr_Occurred())
        return -1;
    if (k != NULL) {
        kind = PyLong_AsLong(k);
        if (kind == -1 && PyErr_Occurred())
            return -1;
        if (kind < 0 || kind >= K_COUNT) {
            PyErr_SetString(PyExc_ValueError, "tag kind out of range");
            return -1;
        }
    }
    int skipped = field_of(w->skipped, name), own = field_of(w->own, name);
    if (skipped == -2 || own == -2)
        return -1;
    int boiler = PySet_Contains(w->boiler_tags, name);
    Py_ssize_t dash = PyUnicode_FindChar(name, '-', 0, PY_SSIZE_T_MAX, 1);
    int pre = PyUnicode_CompareWithASCIIString(name, "pre") == 0;
    if (boiler < 0 || dash == -2)
        return -1;
    info->kind = (unsigned char)kind;
    info->skipped = (signed char)skipped;
    info->own = (signed char)own;
    info->boiler = (unsigned char)boiler;
    info->dash = dash >= 0;
    info->first_dash = dash == 0;
    info->pre = (unsigned char)pre;
    Py_INCREF(name);
    info->name = name;
    return 0;
}

static uint64_t
fnv1a(const unsigned char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

/* The info of an element's qualified name (its bytes as Lexbor holds them); NULL with
 * an exception on failure. Borrowed: from the memo (whose entries stay until the
 * walker goes), or past its bound from *scratch (valid until the next call). */
const tag_info *
tag_lookup(Walker *w, tag_info *scratch, const unsigned char *name, size_t len)
{
    uint64_t h = fnv1a(name, len);
    size_t i = (size_t)h & (TAG_SLOTS - 1);
    for (;; i = (i + 1) & (TAG_SLOTS - 1)) {
        tag_slot *s = &w->slots[i];
        if (s->key == NULL)
            break;
        if (s->hash == h && s->len == len && memcmp(s->key, name, len) == 0)
            return &s->info;
    }
    /* Decoded as selectolax does (UTF-8, invalid bytes as U+FFFD). */
    PyObject *text = PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)len, "replace");
    if (text == NULL)
        return NULL;
    tag_info info;
    int rc = tag_info_fill(w, text, &info);
    Py_DECREF(text);
    if (rc < 0)
        return NULL;
    unsigned char *key = w->filled < TAG_FILL ? PyMem_Malloc(len ? len : 1) : NULL;
    if (key == NULL) {
        Py_XDECREF(scratch->name);
        *scratch = info;
        return scratch;
    }
    memcpy(key, name, len);
    tag_slot *s = &w->slots[i];
    s->key = key;
    s->len = len;
    s->hash = h;
    s->info = info;
    w->filled++;
    return &s->info;
}

void
tag_memo_clear(Walker *w)
{
    if (w->slots != NULL) {
        for (size_t i = 0; i < TAG_SLOTS; i++) {
            if (w->slots[i].key != NULL) {
                PyMem_Free(w->slots[i].key);
                Py_CLEAR(w->slots[i].info.name);
                w->slots[i].key = NULL;
            }
        }
        w->filled = 0;
    }
}
