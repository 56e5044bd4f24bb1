/* trawl._native: the hot loops of a crawl's pages in C (optional: every caller has a
 * Python path computing the same, used when this module is not built). */
#ifndef TRAWL_NATIVE_H
#define TRAWL_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* minhash.c */
PyObject *native_minima(PyObject *module, PyObject *args);
PyObject *native_signature(PyObject *module, PyObject *args);

/* spaces.c */
PyObject *native_is_collapsed(PyObject *module, PyObject *arg);
int native_collapsed(PyObject *text);
PyObject *native_ascii_words(PyObject *module, PyObject *arg);

/* walk_text.c: the bounds of text.strip() (the walk's and the scorer's) */
void text_strip_bounds(PyObject *text, Py_ssize_t *lo, Py_ssize_t *hi);

/* score.c: the extractor's scoring (score.h) */
PyObject *native_article_lines(PyObject *module, PyObject *args);
PyObject *native_article_scores(PyObject *module, PyObject *args);
PyObject *native_score_constants(PyObject *module, PyObject *unused);

/* bloom.c: the index volumes' term filters */
PyObject *native_bloom_add(PyObject *module, PyObject *args);
PyObject *native_bloom_test(PyObject *module, PyObject *args);

/* terms.c: the Tokens and Terms types, added to the module. */
int native_add_terms(PyObject *module);

#endif
