/* trawl._native: the module (see native.h). */
#include "native.h"

static PyMethodDef methods[] = {
    {"minima", native_minima, METH_VARARGS,
     "minima(hashes, a, b) -> bytes: the top 32 bits of min (a*x + b mod 2^64) over the "
     "shingle hashes x, per permutation, little-endian uint32 each (buffers of native "
     "uint64)."},
    {"signature", native_signature, METH_VARARGS,
     "signature(data, shingle, a, b, long_hash) -> bytes | None: the MinHash signature "
     "of the tokens of data (see csrc/minhash.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "trawl._native", "The hot loops of a crawl's pages, in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (native_add_terms(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
