/* The extractor's scoring in C (trawl.parse._extract_score.article_lines_python, whose
 * Python is the reference): shared declarations of score.c, score_choose.c and score_clean.c. */
#ifndef TRAWL_SCORE_H
#define TRAWL_SCORE_H

#include "native.h"

/* _extract_dom's element flags and packed counters, and _extract_score's constants
 * (score_constants() hands them to the tests, which compare them with the Python). */
#define F_UNLIKELY 1
#define F_BOILERPLATE 2
#define F_SHORT_META 4
enum { CN_IMAGES, CN_INPUTS, CN_EMBEDS, CN_ITEMS, CN_PARAGRAPHS, CN_FIELDS };
#define MIN_PARAGRAPH 25
#define ANCESTOR_LEVELS 5
#define MIN_RIVALS 3
#define MAX_RIVALS 5
#define MAX_META_CHARS 500

/* The bits of a tag's code (_extract_score's table for the C scorer): the sets the tag
 * is in; the rest of the code is its _TAG_BONUS times 256. */
#define T_SCORED 1
#define T_HEADING 2
#define T_CLEANED 4
#define T_LIST 8
#define T_P 16
#define T_UNKNOWN INT32_MIN

/* Return codes besides 0: a Python exception is set (-1), or the Dom holds something
 * this code does not reproduce (a value out of the walk's ranges), so Python scores it
 * (-2). */
#define S_ERROR (-1)
#define S_BAIL (-2)

/* One call's view of a Dom and its working arrays (every array has n slots). */
typedef struct {
    /* The Dom's lists (borrowed from the Dom, which the caller holds). */
    PyObject *tag, *parent, *end, *flags, *inherited, *weight, *signature, *chars, *links,
        *counts, *line_text, *line_owner;
    Py_ssize_t n, nlines;
    PyObject *codes; /* dict: tag -> code */
    int strip_unlikely, weight_classes, clean_conditionally;
    int32_t *code;    /* per element: its tag's code, or T_UNKNOWN */
    Py_ssize_t *slot; /* per element: its place in the scores, or -1 */
    Py_ssize_t *own;  /* per element: its place in the own-text arrays, or -1 */
    /* The scores dict: elements and values in insertion order. */
    Py_ssize_t *s_el, ns;
    double *s_val;
    /* _own_text's dicts: owners in order of first line, their characters and commas. */
    Py_ssize_t *o_el, nown;
    int64_t *o_chars, *o_commas;
} scorer;

/* score.c: list[i] as an int of at most 53 bits (exact as a double, as Python's int
 * division needs), and the element-index fields checked against the walk's ranges. */
int score_item(PyObject *list, Py_ssize_t i, int64_t *out);
int score_parent(scorer *s, Py_ssize_t i, Py_ssize_t *out);
int score_end(scorer *s, Py_ssize_t i, Py_ssize_t *out);
int score_tag(scorer *s, Py_ssize_t i, long *code);
int score_owner(scorer *s, Py_ssize_t line, Py_ssize_t *out);

/* score_choose.c: choose(dom, scores, top, skip_flags=...): the ranges into out (n
 * slots), their number, or an error code; sib: n slots of scratch. */
Py_ssize_t score_choose(scorer *s, Py_ssize_t top, Py_ssize_t *out, Py_ssize_t *sib);

/* score_clean.c: removed_ranges into out (at most n), *nout set. */
int score_removed(scorer *s, const Py_ssize_t *ranges, Py_ssize_t nranges, Py_ssize_t best,
                  Py_ssize_t *out, Py_ssize_t *nout);

#endif
