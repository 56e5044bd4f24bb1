/* The choice of the article in C: _extract_score.choose, _best_inside and
 * _sentence_owners, statement by statement (see score.c). */
#include "score.h"

#include <string.h>

/* _SENTENCE_END.search(text): a "." followed by a space, the end, or a "\n" that ends
 * the text (where "$" also matches). */
static int
sentence_end(PyObject *text)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) != '.')
            continue;
        if (i + 1 == n)
            return 1;
        Py_UCS4 next = PyUnicode_READ(kind, data, i + 1);
        if (next == ' ' || (next == '\n' && i + 2 == n))
            return 1;
    }
    return 0;
}

/* x.strip() == y[ylo:yhi] */
static int
same_stripped(PyObject *x, PyObject *y, Py_ssize_t ylo, Py_ssize_t yhi)
{
    Py_ssize_t lo, hi;
    text_strip_bounds(x, &lo, &hi);
    if (hi - lo != yhi - ylo)
        return 0;
    int xk = PyUnicode_KIND(x), yk = PyUnicode_KIND(y);
    const void *xd = PyUnicode_DATA(x), *yd = PyUnicode_DATA(y);
    for (Py_ssize_t i = 0; i < hi - lo; i++)
        if (PyUnicode_READ(xk, xd, lo + i) != PyUnicode_READ(yk, yd, ylo + i))
            return 0;
    return 1;
}

/* _children(dom, index) into out (NULL: only counted, up to limit); their number. */
static Py_ssize_t
children(scorer *s, Py_ssize_t index, Py_ssize_t *out, Py_ssize_t limit)
{
    Py_ssize_t child = index + 1, stop, count = 0;
    if (score_end(s, index, &stop) < 0)
        return S_BAIL;
    while (child < stop && count < limit) {
        if (out != NULL)
            out[count] = child;
        count++;
        if (score_end(s, child, &child) < 0)
            return S_BAIL;
    }
    return count;
}

static double
score_of(const scorer *s, Py_ssize_t index, double missing)
{
    return s->slot[index] >= 0 ? s->s_val[s->slot[index]] : missing;
}

/* The rivals of choose(): of the scores of at least 0.75 * top_score but top's, the
 * five best by a stable sort (ties in insertion order), best first, into r; how many. */
static Py_ssize_t
rivals(const scorer *s, Py_ssize_t top, double top_score, Py_ssize_t r[MAX_RIVALS])
{
    Py_ssize_t nr = 0;
    for (Py_ssize_t j = 0; j < s->ns; j++) {
        double v = s->s_val[j];
        if (s->s_el[j] == top || !(v >= 0.75 * top_score))
            continue;
        Py_ssize_t at = nr;
        while (at > 0 && s->s_val[s->slot[r[at - 1]]] < v)
            at--;
        if (at == MAX_RIVALS)
            continue;
        if (nr < MAX_RIVALS)
            nr++;
        memmove(r + at + 1, r + at, (size_t)(nr - 1 - at) * sizeof(*r));
        r[at] = s->s_el[j];
    }
    return nr;
}

/* choose()'s top: the ancestor holding most rivals, the climb to better-scoring
 * ancestors, the climb out of lone children. top or an error code; *parent: its
 * parent. */
static Py_ssize_t
top_of(scorer *s, Py_ssize_t top, double top_score, Py_ssize_t *parent)
{
    Py_ssize_t r[MAX_RIVALS], nr = rivals(s, top, top_score, r), ancestor, end, p;
    if (nr >= MIN_RIVALS) {
        if (score_parent(s, top, &ancestor) < 0)
            return S_BAIL;
        while (ancestor > 0) {
            int inside = 0;
            if (score_end(s, ancestor, &end) < 0)
                return S_BAIL;
            for (Py_ssize_t i = 0; i < nr; i++)
                inside += ancestor < r[i] && r[i] < end;
            if (inside >= MIN_RIVALS) {
                top = ancestor;
                break;
            }
            if (score_parent(s, ancestor, &ancestor) < 0)
                return S_BAIL;
        }
    }
    double last = score_of(s, top, 0.0);
    if (score_parent(s, top, &ancestor) < 0)
        return S_BAIL;
    while (ancestor > 0) {
        if (s->slot[ancestor] >= 0) {
            double v = s->s_val[s->slot[ancestor]];
            if (v < last / 3)
                break;
            if (v > last) {
                top = ancestor;
                break;
            }
            last = v;
        }
        if (score_parent(s, ancestor, &ancestor) < 0)
            return S_BAIL;
    }
    for (;;) {
        if (score_parent(s, top, &p) < 0)
            return S_BAIL;
        Py_ssize_t count = p > 0 ? children(s, p, NULL, 2) : 0;
        if (count < 0)
            return count;
        if (count != 1)
            break;
        top = p;
    }
    *parent = p;
    return top;
}

/* _best_inside(dom, scores, siblings): a new array (NULL: no memory, error set). */
static double *
best_inside(scorer *s, const Py_ssize_t *sib, Py_ssize_t nsib)
{
    double *best = PyMem_Malloc(nsib ? (size_t)nsib * sizeof(double) : 1);
    if (best == NULL)
        return (double *)PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < nsib; k++)
        best[k] = score_of(s, sib[k], 0.0);
    for (Py_ssize_t j = 0; j < s->ns; j++) {
        /* bisect_right(siblings, candidate) - 1; the siblings' ends were read */
        Py_ssize_t c = s->s_el[j], a = 0, b = nsib, end;
        while (a < b) {
            Py_ssize_t mid = (a + b) / 2;
            if (c < sib[mid])
                b = mid;
            else
                a = mid + 1;
        }
        if (a - 1 >= 0 && score_end(s, sib[a - 1], &end) == 0 && c < end
            && s->s_val[j] > best[a - 1])
            best[a - 1] = s->s_val[j];
    }
    return best;
}

/* _sentence_owners(dom, set(siblings)): a new array, per element 2 for the siblings
 * owning a sentence's line (NULL: an error, set, or *rc = S_BAIL). */
static unsigned char *
sentence_owners(scorer *s, const Py_ssize_t *sib, Py_ssize_t nsib, Py_ssize_t *rc)
{
    unsigned char *mark = PyMem_Calloc((size_t)s->n + 1, 1);
    if (mark == NULL) {
        *rc = S_ERROR;
        return (unsigned char *)PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < nsib; k++)
        mark[sib[k]] = 1;
    for (Py_ssize_t line = 0; line < s->nlines; line++) {
        Py_ssize_t owner;
        if (score_owner(s, line, &owner) < 0) {
            PyMem_Free(mark);
            *rc = S_BAIL;
            return NULL;
        }
        if (mark[owner] && sentence_end(PyList_GET_ITEM(s->line_text, line)))
            mark[owner] = 2;
    }
    return mark;
}

Py_ssize_t
score_choose(scorer *s, Py_ssize_t top, Py_ssize_t *out, Py_ssize_t *sib)
{
    double top_score = s->s_val[s->slot[top]];
    Py_ssize_t p, lo, hi, end, nout = 0, rc = 0;
    if ((top = top_of(s, top, top_score, &p)) < 0)
        return top;
    top_score = score_of(s, top, top_score);
    if (p < 0) {
        out[0] = top;
        return 1;
    }
    double threshold = top_score * 0.2 > 10.0 ? top_score * 0.2 : 10.0;
    PyObject *top_sig = PyList_GET_ITEM(s->signature, top);
    if (!PyUnicode_CheckExact(top_sig))
        return S_BAIL;
    text_strip_bounds(top_sig, &lo, &hi);
    Py_ssize_t nsib = children(s, p, sib, s->n);
    if (nsib < 0)
        return nsib;
    double *inner = NULL;           /* _best_inside, on first need */
    unsigned char *sentence = NULL; /* _sentence_owners, on first need */
    for (Py_ssize_t i = 0; rc == 0 && i < nsib; i++) {
        Py_ssize_t sibling = sib[i];
        int64_t flags, length, links;
        long code;
        double value;
        if (sibling == top) {
            out[nout++] = sibling;
            continue;
        }
        PyObject *sig = PyList_GET_ITEM(s->signature, sibling);
        if (score_item(s->flags, sibling, &flags) < 0 || !PyUnicode_CheckExact(sig)) {
            rc = S_BAIL;
            break;
        }
        if (flags & (s->strip_unlikely ? F_BOILERPLATE | F_UNLIKELY : F_BOILERPLATE))
            continue;
        if (hi > lo && same_stripped(sig, top_sig, lo, hi)) {
            if (inner == NULL && (inner = best_inside(s, sib, nsib)) == NULL) {
                rc = S_ERROR;
                break;
            }
            value = inner[i] + top_score * 0.2;
        }
        else
            value = score_of(s, sibling, 0.0);
        if (value >= threshold) {
            out[nout++] = sibling;
            continue;
        }
        if (flags != 0)
            continue;
        if ((rc = score_tag(s, sibling, &code)) < 0 || (rc = score_end(s, sibling, &end)) < 0)
            break;
        if (!((code & T_P) || end == sibling + 1))
            continue;
        if (score_item(s->chars, sibling, &length) < 0
            || score_item(s->links, sibling, &links) < 0) {
            rc = S_BAIL;
            break;
        }
        double density = (double)links / (double)(length > 1 ? length : 1);
        if (length > 80 && density < 0.25)
            out[nout++] = sibling;
        else if (0 < length && length <= 80 && density == 0) {
            if (sentence == NULL && (sentence = sentence_owners(s, sib, nsib, &rc)) == NULL)
                break;
            if (sentence[sibling] == 2)
                out[nout++] = sibling;
        }
    }
    PyMem_Free(inner);
    PyMem_Free(sentence);
    return rc < 0 ? rc : nout;
}
