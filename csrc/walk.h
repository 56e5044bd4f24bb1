/* The extractor's DOM walk in C (trawl.parse._extract_dom.walk, whose Python is the
 * reference): shared declarations of walk.c, walk_tags.c and walk_text.c. */
#ifndef TRAWL_WALK_H
#define TRAWL_WALK_H

#include "lexbor_view.h"

/* How a tag is handled: the values of _extract_dom's _SKIP ... _IMAGE. */
enum { K_SKIP, K_BLOCK, K_INLINE, K_PLAIN, K_LINK, K_BREAK, K_IMAGE, K_COUNT };

/* The packed per-element counters (IMAGES ... PARAGRAPHS), 32 bits apart. */
#define N_COUNTERS 5
#define C_IMAGES 0

/* Return codes of the walk's steps besides 0: a Python exception is set (-1), or the
 * tree holds something the C walk does not reproduce, so Python walks the page (-2). */
#define W_ERROR (-1)
#define W_BAIL (-2)

/* What the walk needs to know of a tag name, computed once from the decoded name with
 * the Python tables (so it is what the Python walk would decide). */
typedef struct {
    PyObject *name; /* the decoded name (strong reference) */
    unsigned char kind, dash, first_dash, boiler, pre;
    signed char skipped, own; /* counter bumped (skipped subtree / own element), or -1 */
} tag_info;

typedef struct {
    unsigned char *key;
    size_t len;
    uint64_t hash;
    tag_info info;
} tag_slot;

/* A bounded memo of tag names (a hostile page can hold any number of custom names:
 * past the bound, names are classified on each use). */
#define TAG_SLOTS 1024
#define TAG_FILL 512

typedef struct {
    PyObject_HEAD
    lx_api api;
    PyObject *kind, *skipped, *own;                       /* dicts: tag -> int */
    PyObject *boiler_tags, *hidden_tokens, *boiler_roles; /* frozensets of str */
    PyObject *verdict, *style_search;                     /* callables */
    long boilerplate_flag;                                /* _extract_dom.BOILERPLATE */
    PyObject *empty, *space, *newline;                    /* "", " ", "\n" */
    tag_info empty_info;                                  /* the tag "" */
    tag_slot *slots;
    size_t filled;
    Py_ssize_t walks; /* pages walked in C to the end */
} Walker;

/* One recorded (block) element. */
typedef struct {
    PyObject *tag, *sig; /* strong references (sig NULL: "") */
    int64_t parent, end, flags, inherited, weight, chars, links;
    uint64_t count[N_COUNTERS];
    unsigned char pre;
} elem;

typedef struct {
    Walker *w;
    elem *el;
    Py_ssize_t n, cap;
    PyObject *pieces;    /* list of str: the text of the line being built */
    PyObject *line_text; /* list of str */
    int64_t *line_owner, *line_links;
    Py_ssize_t nlines, lcap;
    int64_t owner, link_len;
    /* A name past the memo's bound, per walk: a callback into Python may let another
     * thread walk a page with the same walker meanwhile. */
    tag_info scratch;
} walk_state;

/* walk_tags.c */
int tag_info_fill(Walker *w, PyObject *name, tag_info *info);
const tag_info *tag_lookup(Walker *w, tag_info *scratch, const unsigned char *name,
                           size_t len);
void tag_memo_clear(Walker *w);

/* walk_text.c */
int text_isspace(PyObject *text);
Py_ssize_t text_stripped_len(PyObject *text);
PyObject *text_collapse(PyObject *text);
int flush_line(walk_state *st, int in_pre);

/* walk.c: the walk of the subtree under start into st (0, W_ERROR or W_BAIL). */
int walk_run(walk_state *st, lx_node *start, Py_ssize_t max_elements, PyObject *verdicts,
             PyObject *token_cache);
/* Then subtree totals, class weights and inherited flags (_accumulate, _judge_classes). */
int walk_finish(walk_state *st, PyObject *verdicts, PyObject *token_cache);

/* walk_type.c */
int native_add_walker(PyObject *module);

#endif
