/* trawl._native: the module (see native.h). */
#include "native.h"
#include "walk.h"

static PyMethodDef methods[] = {
    {"minima", native_minima, METH_VARARGS,
     "minima(hashes, a, b) -> bytes: the top 32 bits of min (a*x + b mod 2^64) over the "
     "shingle hashes x, per permutation, little-endian uint32 each (buffers of native "
     "uint64)."},
    {"signature", native_signature, METH_VARARGS,
     "signature(data, shingle, a, b, long_hash) -> bytes | None: the MinHash signature "
     "of the tokens of data (see csrc/minhash.c)."},
    {"is_collapsed", native_is_collapsed, METH_O,
     "is_collapsed(text) -> bool: text is not empty, neither starts nor ends with white "
     "space, and holds no two spaces in a row nor any of \\n \\t \\r \\xa0 \\f \\v "
     "(see csrc/spaces.c)."},
    {"ascii_words", native_ascii_words, METH_O,
     "ascii_words(text) -> bytes | None: the ASCII bytes of ' '.join(text.split()), "
     "None when text is not ASCII."},
    {"article_lines", native_article_lines, METH_VARARGS,
     "article_lines(dom, tag_codes, strip_unlikely, weight_classes, clean_conditionally) "
     "-> list[int] | None: trawl.parse._extract_score.article_lines_python in C (see "
     "csrc/score.c), or None when the Dom holds something it does not reproduce."},
    {"article_scores", native_article_scores, METH_VARARGS,
     "article_scores(dom, tag_codes, strip_unlikely, weight_classes, clean_conditionally) "
     "-> list[tuple[int, float]] | None: the C's score(dom, options).items(), in their "
     "order (for the tests)."},
    {"score_constants", native_score_constants, METH_NOARGS,
     "score_constants() -> dict[str, int]: the flags, counters, thresholds and tag-code "
     "bits csrc/score.c assumes (the tests compare them with the Python's)."},
    {"bloom_add", native_bloom_add, METH_VARARGS,
     "bloom_add(bits, hashes, probes) -> None: set the bits of each little-endian "
     "uint64 hash in the bytearray bits (see csrc/bloom.c)."},
    {"bloom_test", native_bloom_test, METH_VARARGS,
     "bloom_test(bits, hashes, probes) -> bytes: for each hash, 1 if all its bits are "
     "set, else 0."},
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
    if (native_add_terms(m) < 0 || native_add_walker(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
