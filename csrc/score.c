/* trawl._native.article_lines: _extract_score.article_lines_python in C, on the lists
 * of a Dom, read in place.
 *
 * The code follows the Python statement by statement (same names, same order), which is
 * the reference; the tests compare the two on whole corpora. What makes it exact:
 * - floats are the same doubles, computed in the same order (and the module is built
 *   with -ffp-contract=off, so no multiply-add is fused);
 * - the dicts' insertion orders, which decide ties (max keeps the first best, the
 *   rivals' stable sort), are kept as arrays in insertion order;
 * - ints are taken only within 53 bits (exact as doubles); anything out of the walk's
 *   ranges (an index out of bounds, a parent after its child, a non-int) hands the Dom
 *   back to Python (None), which then computes the reference result. */
#include "score.h"

#include <string.h>

int
score_item(PyObject *list, Py_ssize_t i, int64_t *out)
{
    PyObject *o = PyList_GET_ITEM(list, i);
    int overflow = 0;
    if (!PyLong_CheckExact(o))
        return S_BAIL;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || v > (1LL << 53) || v < -(1LL << 53))
        return S_BAIL;
    *out = v;
    return 0;
}

/* parent[i]: -1 or an earlier element. */
int
score_parent(scorer *s, Py_ssize_t i, Py_ssize_t *out)
{
    int64_t v;
    if (score_item(s->parent, i, &v) < 0 || v < -1 || v >= i)
        return S_BAIL;
    *out = (Py_ssize_t)v;
    return 0;
}

/* end[i]: past i, at most n. */
int
score_end(scorer *s, Py_ssize_t i, Py_ssize_t *out)
{
    int64_t v;
    if (score_item(s->end, i, &v) < 0 || v <= i || v > s->n)
        return S_BAIL;
    *out = (Py_ssize_t)v;
    return 0;
}

/* The code of tag[i] (0 for a tag in none of the tables), looked up once a call. */
int
score_tag(scorer *s, Py_ssize_t i, long *code)
{
    if (s->code[i] != T_UNKNOWN) {
        *code = s->code[i];
        return 0;
    }
    PyObject *tag = PyList_GET_ITEM(s->tag, i);
    if (!PyUnicode_CheckExact(tag))
        return S_BAIL;
    PyObject *v = PyDict_GetItemWithError(s->codes, tag);
    long c = 0;
    if (v == NULL && PyErr_Occurred())
        return S_ERROR;
    if (v != NULL && (c = PyLong_AsLong(v)) == -1 && PyErr_Occurred())
        return S_ERROR;
    if (c <= T_UNKNOWN || c > INT32_MAX)
        return S_BAIL;
    *code = s->code[i] = (int32_t)c;
    return 0;
}

int
score_owner(scorer *s, Py_ssize_t line, Py_ssize_t *out)
{
    int64_t v;
    if (score_item(s->line_owner, line, &v) < 0 || v < 0 || v >= s->n)
        return S_BAIL;
    *out = (Py_ssize_t)v;
    return 0;
}

/* text.count(",") + text.count("，") + text.count("、") + text.count("،") */
static int64_t
commas(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int64_t found = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = data, *stop = p + n;
        while ((p = memchr(p, ',', (size_t)(stop - p))) != NULL) {
            found++;
            p++;
        }
        return found;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        found += ch == ',' || ch == 0xFF0C || ch == 0x3001 || ch == 0x060C;
    }
    return found;
}

/* _own_text, then score(dom, options): the scores in s->s_el / s->s_val. */
static int
score(scorer *s)
{
    int64_t mask = s->strip_unlikely ? F_BOILERPLATE | F_UNLIKELY : F_BOILERPLATE;
    for (Py_ssize_t line = 0; line < s->nlines; line++) {
        PyObject *text = PyList_GET_ITEM(s->line_text, line);
        Py_ssize_t owner;
        int64_t inherited;
        if (!PyUnicode_CheckExact(text) || score_owner(s, line, &owner) < 0
            || score_item(s->inherited, owner, &inherited) < 0)
            return S_BAIL;
        if (inherited & mask)
            continue;
        Py_ssize_t k = s->own[owner];
        if (k < 0) {
            k = s->own[owner] = s->nown++;
            s->o_el[k] = owner;
            s->o_chars[k] = s->o_commas[k] = 0;
        }
        s->o_chars[k] += PyUnicode_GET_LENGTH(text);
        s->o_commas[k] += commas(text);
    }
    for (Py_ssize_t k = 0; k < s->nown; k++) {
        Py_ssize_t owner = s->o_el[k], ancestor, end;
        int64_t length = s->o_chars[k];
        long code;
        if (length < MIN_PARAGRAPH)
            continue;
        int rc = score_tag(s, owner, &code);
        if (rc < 0)
            return rc;
        if (!(code & T_SCORED))
            continue;
        if (length > (1LL << 53) || s->o_commas[k] > (1LL << 53))
            return S_BAIL;
        double part = (double)length / 100.0;
        double points = (double)(1 + s->o_commas[k]) + (3.0 < part ? 3.0 : part);
        if (score_end(s, owner, &end) < 0)
            return S_BAIL;
        if (end > owner + 1)
            ancestor = owner;
        else if (score_parent(s, owner, &ancestor) < 0)
            return S_BAIL;
        for (int level = 0; ancestor >= 0 && level < ANCESTOR_LEVELS; level++) {
            Py_ssize_t j = s->slot[ancestor];
            if (j < 0) {
                int64_t weight = 0;
                if ((rc = score_tag(s, ancestor, &code)) < 0)
                    return rc;
                if (s->weight_classes && score_item(s->weight, ancestor, &weight) < 0)
                    return S_BAIL;
                j = s->slot[ancestor] = s->ns++;
                s->s_el[j] = ancestor;
                s->s_val[j] = (double)((code - (code & 0xff)) / 256 + weight);
            }
            s->s_val[j] += points / (level == 0 ? 1.0 : level == 1 ? 2.0 : level * 3.0);
            if (score_parent(s, ancestor, &ancestor) < 0)
                return S_BAIL;
        }
    }
    for (Py_ssize_t j = 0; j < s->ns; j++) {
        int64_t links, chars;
        if (score_item(s->links, s->s_el[j], &links) < 0
            || score_item(s->chars, s->s_el[j], &chars) < 0)
            return S_BAIL;
        s->s_val[j] *= 1 - (double)links / (double)(chars > 1 ? chars : 1);
    }
    return 0;
}

/* The final sweep of article_lines: the lines inside ranges and outside removed. */
static PyObject *
kept_lines(scorer *s, const Py_ssize_t *ranges, Py_ssize_t nranges, const Py_ssize_t *removed,
           Py_ssize_t nremoved)
{
    PyObject *keep = PyList_New(0);
    Py_ssize_t r = 0, d = 0, end;
    for (Py_ssize_t line = 0; keep != NULL && line < s->nlines; line++) {
        Py_ssize_t owner;
        if (score_owner(s, line, &owner) < 0)
            goto bail;
        for (; r < nranges; r++) {
            if (score_end(s, ranges[r], &end) < 0)
                goto bail;
            if (owner < end)
                break;
        }
        if (r == nranges)
            break;
        if (owner < ranges[r])
            continue;
        for (; d < nremoved; d++) {
            if (score_end(s, removed[d], &end) < 0)
                goto bail;
            if (owner < end)
                break;
        }
        if (d < nremoved && owner >= removed[d])
            continue;
        PyObject *index = PyLong_FromSsize_t(line);
        if (index == NULL || PyList_Append(keep, index) < 0)
            Py_CLEAR(keep);
        Py_XDECREF(index);
    }
    return keep;
bail:
    Py_DECREF(keep);
    return Py_NewRef(Py_None);
}

/* article_lines(dom, options) on a scorer whose arrays are set. */
static PyObject *
article_lines(scorer *s, Py_ssize_t *ranges, Py_ssize_t *removed)
{
    int rc = score(s);
    if (rc == 0 && s->ns == 0)
        return PyList_New(0);
    Py_ssize_t best = 0, nranges = 0, nremoved = 0;
    if (rc == 0) {
        for (Py_ssize_t j = 1; j < s->ns; j++)
            if (s->s_val[j] > s->s_val[best])
                best = j;
        best = s->s_el[best];
        /* choose's scratch for the siblings: o_el, done with once scored */
        nranges = score_choose(s, best, ranges, s->o_el);
        if (nranges < 0)
            rc = (int)nranges;
    }
    if (rc == 0)
        rc = score_removed(s, ranges, nranges, best, removed, &nremoved);
    if (rc == S_BAIL)
        return Py_NewRef(Py_None);
    if (rc < 0)
        return NULL;
    return kept_lines(s, ranges, nranges, removed, nremoved);
}

/* getattr(dom, name), a list of n items (n < 0: any length, set). */
static PyObject *
dom_list(PyObject *dom, const char *name, Py_ssize_t *n, PyObject **held)
{
    PyObject *list = PyObject_GetAttrString(dom, name);
    if (list == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        return Py_None;
    }
    *held = list;
    if (!PyList_CheckExact(list) || (*n >= 0 && PyList_GET_SIZE(list) != *n))
        return Py_None; /* borrowed marker: not a Dom this code reads */
    *n = PyList_GET_SIZE(list);
    return list;
}

/* score(dom, options).items() as a list of (element, score) pairs (a new reference, or
 * None): for the tests, which compare each double and the insertion order. */
static PyObject *
scores_list(scorer *s)
{
    int rc = score(s);
    if (rc == S_BAIL)
        return Py_NewRef(Py_None);
    if (rc < 0)
        return NULL;
    PyObject *out = PyList_New(s->ns);
    for (Py_ssize_t j = 0; out != NULL && j < s->ns; j++) {
        PyObject *pair = Py_BuildValue("(nd)", s->s_el[j], s->s_val[j]);
        if (pair == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, j, pair);
    }
    return out;
}

/* article_lines(dom, ...), or with scores_only the scores (scores_list). */
static PyObject *
run(PyObject *args, int scores_only)
{
    static const char *names[] = {"tag", "parent", "end", "flags", "inherited", "weight",
                                  "signature", "chars", "link_chars", "counts",
                                  "line_text", "line_owner"};
    enum { NLISTS = sizeof(names) / sizeof(names[0]) };
    PyObject *dom, *held[NLISTS] = {NULL}, *lists[NLISTS], *out = NULL;
    scorer s;
    memset(&s, 0, sizeof(s));
    if (!PyArg_ParseTuple(args, "OO!ppp", &dom, &PyDict_Type, &s.codes, &s.strip_unlikely,
                          &s.weight_classes, &s.clean_conditionally))
        return NULL;
    Py_ssize_t n = -1, nlines = -1;
    for (int i = 0; i < NLISTS; i++) {
        Py_ssize_t *size = i < NLISTS - 2 ? &n : &nlines;
        lists[i] = dom_list(dom, names[i], size, &held[i]);
        if (lists[i] == NULL || lists[i] == Py_None) {
            out = lists[i] == NULL ? NULL : Py_NewRef(Py_None);
            goto done;
        }
    }
    PyObject **fields[NLISTS] = {&s.tag, &s.parent, &s.end, &s.flags, &s.inherited,
                                 &s.weight, &s.signature, &s.chars, &s.links, &s.counts,
                                 &s.line_text, &s.line_owner};
    for (int i = 0; i < NLISTS; i++)
        *fields[i] = lists[i];
    s.n = n;
    s.nlines = nlines;
    /* Every per-element array in one block: 5 of Py_ssize_t (slot, own, s_el, o_el and
     * the ranges), 1 of double, 2 of int64, 1 of int32, and the removed elements. */
    size_t each = 6 * sizeof(Py_ssize_t) + sizeof(double) + 2 * sizeof(int64_t) + 4;
    char *block = PyMem_Malloc(n ? (size_t)n * each : 1);
    if (block == NULL) {
        out = PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t *ranges, *removed;
    Py_ssize_t **ssizes[] = {&s.slot, &s.own, &s.s_el, &s.o_el, &ranges, &removed};
    char *at = block;
    for (size_t i = 0; i < sizeof(ssizes) / sizeof(ssizes[0]); i++, at += n * sizeof(Py_ssize_t))
        *ssizes[i] = (Py_ssize_t *)at;
    s.s_val = (double *)at;
    s.o_chars = (int64_t *)(at + n * sizeof(double));
    s.o_commas = s.o_chars + n;
    s.code = (int32_t *)(s.o_commas + n);
    for (Py_ssize_t i = 0; i < n; i++) {
        s.slot[i] = s.own[i] = -1;
        s.code[i] = T_UNKNOWN;
    }
    out = scores_only ? scores_list(&s) : article_lines(&s, ranges, removed);
    PyMem_Free(block);
done:
    for (int i = 0; i < NLISTS; i++)
        Py_XDECREF(held[i]);
    return out;
}

PyObject *
native_article_lines(PyObject *module, PyObject *args)
{
    return run(args, 0);
}

PyObject *
native_article_scores(PyObject *module, PyObject *args)
{
    return run(args, 1);
}

PyObject *
native_score_constants(PyObject *module, PyObject *unused)
{
    return Py_BuildValue(
        "{sisisisisisisisisisisisisisisisisi}", "UNLIKELY", F_UNLIKELY, "BOILERPLATE",
        F_BOILERPLATE, "SHORT_META", F_SHORT_META, "IMAGES", 32 * CN_IMAGES, "INPUTS",
        32 * CN_INPUTS, "EMBEDS", 32 * CN_EMBEDS, "ITEMS", 32 * CN_ITEMS, "PARAGRAPHS",
        32 * CN_PARAGRAPHS, "_MIN_PARAGRAPH", MIN_PARAGRAPH, "_ANCESTOR_LEVELS",
        ANCESTOR_LEVELS, "_MIN_RIVALS", MIN_RIVALS, "_MAX_META_CHARS", MAX_META_CHARS,
        "SCORED", T_SCORED, "HEADING", T_HEADING, "CLEANED", T_CLEANED, "LIST", T_LIST, "P", T_P);
}
