/* trawl._native.Tokens(data): the tokens of an ASCII text as the index writer's
 * analyzer splits it: maximal runs of ASCII letters and digits, lower-cased (every
 * other byte separates them), i.e. ``data.translate(_ASCII_TOKENS).lower().split()`` of
 * trawl.index.stems, kept as offsets into one lower-cased copy, each with a hash, for
 * the Terms table (terms.c). */
#include "tokens.h"

/* A byte's lower-case form if it is a token byte (an ASCII letter or digit), else 0:
 * one load a byte in place of three range tests and a case test. */
static const uint8_t LOWER[256] = {
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
     48,  49,  50,  51,  52,  53,  54,  55,  56,  57,   0,   0,   0,   0,   0,   0,
      0,  97,  98,  99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122,   0,   0,   0,   0,   0,
      0,  97,  98,  99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
      0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
};

static void
tokens_free(TokensObject *self)
{
    PyMem_Free(self->text);
    PyMem_Free(self->start);
    PyMem_Free(self->size);
    PyMem_Free(self->hash);
    PyMem_Free(self->first);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
tokens_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"data", NULL};
    Py_buffer data;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*:Tokens", kwlist, &data))
        return NULL;
    TokensObject *self = (TokensObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const uint8_t *in = data.buf;
    const Py_ssize_t len = data.len;
    const size_t most = (size_t)(len / 2 + 1); /* a byte and a separator each */
    self->text = PyMem_Malloc((size_t)(len ? len : 1));
    self->start = PyMem_Malloc(most * sizeof(Py_ssize_t));
    self->size = PyMem_Malloc(most * sizeof(Py_ssize_t));
    self->hash = PyMem_Malloc(most * sizeof(uint64_t));
    if (!self->text || !self->start || !self->size || !self->hash) {
        PyBuffer_Release(&data);
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    /* Local restrict pointers: the byte stores would otherwise make the compiler load
     * the arrays' addresses from self again for every token. */
    char *restrict low = self->text;
    Py_ssize_t *restrict starts = self->start, *restrict sizes = self->size;
    uint64_t *restrict hashes = self->hash;
    Py_ssize_t n = 0, i = 0;
    for (;;) {
        while (i < len && LOWER[in[i]] == 0)
            i++;
        if (i == len)
            break;
        const Py_ssize_t start = i;
        for (uint8_t c; i < len && (c = LOWER[in[i]]) != 0; i++)
            low[i] = (char)c;
        starts[n] = start;
        sizes[n] = i - start;
        hashes[n] = token_hash((const uint8_t *)low + start, i - start);
        n++;
    }
    self->n = n;
    PyBuffer_Release(&data);
    return (PyObject *)self;
}

const int32_t *
tokens_first(TokensObject *self)
{
    if (self->first != NULL)
        return self->first;
    const Py_ssize_t n = self->n;
    if (n > INT32_MAX / 2) {
        PyErr_SetString(PyExc_OverflowError, "Tokens: over a billion tokens");
        return NULL;
    }
    Py_ssize_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    int32_t *first = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    int32_t *table = PyMem_Malloc((size_t)cap * sizeof(int32_t));
    if (first == NULL || table == NULL) {
        PyMem_Free(first);
        PyMem_Free(table);
        PyErr_NoMemory();
        return NULL;
    }
    memset(table, 0xff, (size_t)cap * sizeof(int32_t)); /* -1: empty */
    const char *text = self->text;
    const Py_ssize_t *starts = self->start, *sizes = self->size;
    const uint64_t *hashes = self->hash;
    for (int32_t k = 0; k < (int32_t)n; k++) {
        const uint64_t h = hashes[k];
        Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)(cap - 1));
        int32_t j;
        for (; (j = table[i]) >= 0; i = (i + 1) & (cap - 1)) {
            if (hashes[j] == h && sizes[j] == sizes[k] &&
                memcmp(text + starts[j], text + starts[k], (size_t)sizes[k]) == 0)
                break;
        }
        if (j < 0)
            table[i] = j = k;
        first[k] = j;
    }
    PyMem_Free(table);
    self->first = first;
    return first;
}

static Py_ssize_t
tokens_len(TokensObject *self)
{
    return self->n;
}

static PyObject *
tokens_as_list(TokensObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New(self->n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < self->n; k++) {
        PyObject *b = PyBytes_FromStringAndSize(self->text + self->start[k], self->size[k]);
        if (b == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, b);
    }
    return out;
}

static PyMethodDef tokens_methods[] = {
    {"as_list", (PyCFunction)tokens_as_list, METH_NOARGS, "The tokens as bytes, in order."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods tokens_as_sequence = {.sq_length = (lenfunc)tokens_len};

PyTypeObject TokensType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "trawl._native.Tokens",
    .tp_basicsize = sizeof(TokensObject),
    .tp_dealloc = (destructor)tokens_free,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tokens(data): the lower-cased runs of ASCII letters and digits of data.",
    .tp_new = tokens_new,
    .tp_methods = tokens_methods,
    .tp_as_sequence = &tokens_as_sequence,
};

