/* trawl._native.Tokens(data): the tokens of an ASCII text as the index writer's
 * analyzer splits it: maximal runs of ASCII letters and digits, lower-cased (every
 * other byte separates them), i.e. ``data.translate(_ASCII_TOKENS).lower().split()`` of
 * trawl.index.stems, kept as offsets into one lower-cased copy, each with a hash, for
 * the Terms table (terms.c). */
#include "tokens.h"

static inline int
is_token_byte(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void
tokens_free(TokensObject *self)
{
    PyMem_Free(self->text);
    PyMem_Free(self->start);
    PyMem_Free(self->size);
    PyMem_Free(self->hash);
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
    char *low = self->text;
    Py_ssize_t n = 0, i = 0;
    for (;;) {
        while (i < len && !is_token_byte(in[i]))
            i++;
        if (i == len)
            break;
        const Py_ssize_t start = i;
        for (; i < len && is_token_byte(in[i]); i++)
            low[i] = (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] + 32 : in[i]);
        self->start[n] = start;
        self->size[n] = i - start;
        self->hash[n] = token_hash((const uint8_t *)low + start, i - start);
        n++;
    }
    self->n = n;
    PyBuffer_Release(&data);
    return (PyObject *)self;
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

