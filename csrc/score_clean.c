/* The cleaning of the chosen article in C: _extract_score.removed_ranges and
 * _drop_conditionally, statement by statement (see score.c). */
#include "score.h"

/* The five packed 32-bit counters of dom.counts[i] ((counts >> 32k) & 0xffffffff):
 * S_BAIL for a negative int or one past 160 bits (the walk makes neither). */
static int
counters(scorer *s, Py_ssize_t i, int64_t out[CN_FIELDS])
{
    PyObject *o = PyList_GET_ITEM(s->counts, i);
    unsigned char bytes[4 * CN_FIELDS];
    if (!PyLong_CheckExact(o))
        return S_BAIL;
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t need = PyLong_AsNativeBytes(o, bytes, sizeof(bytes),
                                           Py_ASNATIVEBYTES_LITTLE_ENDIAN
                                               | Py_ASNATIVEBYTES_UNSIGNED_BUFFER
                                               | Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (need < 0) {
        PyErr_Clear();
        return S_BAIL;
    }
    if ((size_t)need > sizeof(bytes))
        return S_BAIL;
#else
    if (_PyLong_AsByteArray((PyLongObject *)o, bytes, sizeof(bytes), 1, 0) < 0) {
        PyErr_Clear(); /* negative, or too wide */
        return S_BAIL;
    }
#endif
    for (int k = 0; k < CN_FIELDS; k++) {
        uint32_t v = 0;
        for (int b = 3; b >= 0; b--)
            v = (v << 8) | bytes[4 * k + b];
        out[k] = v;
    }
    return 0;
}

/* _drop_conditionally(dom, index, scores): 1 to drop, 0 to keep, or an error code. */
static int
drop_conditionally(scorer *s, Py_ssize_t index, long code)
{
    int64_t weight, chars, links, c[CN_FIELDS];
    if (score_item(s->weight, index, &weight) < 0)
        return S_BAIL;
    double own = s->slot[index] >= 0 ? s->s_val[s->slot[index]] : 0.0;
    if ((double)weight + own < 0)
        return 1;
    int rc = counters(s, index, c);
    if (rc < 0)
        return rc;
    if (score_item(s->chars, index, &chars) < 0 || score_item(s->links, index, &links) < 0)
        return S_BAIL;
    int64_t paragraphs = c[CN_PARAGRAPHS], images = c[CN_IMAGES], items = c[CN_ITEMS];
    int is_list = (code & T_LIST) != 0;
    double density = (double)links / (double)(chars > 1 ? chars : 1);
    return (images > 1 && (double)paragraphs / (double)images < 0.5)
           || (!is_list && items - 100 > paragraphs) || c[CN_INPUTS] > paragraphs / 3
           || (!is_list && chars < MIN_PARAGRAPH && (images == 0 || images > 2))
           || (!is_list && weight < 25 && density > 0.2)
           || (is_list && weight < 25 && density > 0.5) || (weight >= 25 && density > 0.5)
           || (c[CN_EMBEDS] == 1 && chars < 75) || c[CN_EMBEDS] > 1;
}

/* removed_ranges(dom, ranges, scores, options, best=best) */
int
score_removed(scorer *s, const Py_ssize_t *ranges, Py_ssize_t nranges, Py_ssize_t best,
              Py_ssize_t *out, Py_ssize_t *nout)
{
    Py_ssize_t w = 0;
    for (Py_ssize_t r = 0; r < nranges; r++) {
        Py_ssize_t start = ranges[r], index = start + 1, stop, end;
        if (score_end(s, start, &stop) < 0)
            return S_BAIL;
        while (index < stop) {
            int64_t flags;
            long code;
            int rc = score_tag(s, index, &code);
            if (rc < 0)
                return rc;
            if (score_item(s->flags, index, &flags) < 0 || score_end(s, index, &end) < 0)
                return S_BAIL;
            int drop = (flags & F_BOILERPLATE) != 0;
            drop = drop || (s->strip_unlikely && (flags & F_UNLIKELY));
            if (!drop && (flags & F_SHORT_META)) {
                int64_t chars;
                if (score_item(s->chars, index, &chars) < 0)
                    return S_BAIL;
                drop = chars < MAX_META_CHARS;
            }
            if (!drop && (code & T_HEADING)) {
                int64_t weight;
                if (score_item(s->weight, index, &weight) < 0)
                    return S_BAIL;
                drop = weight < 0;
            }
            if (!drop && s->clean_conditionally && (code & T_CLEANED)
                && !(index <= best && best < end)) {
                drop = drop_conditionally(s, index, code);
                if (drop < 0)
                    return drop;
            }
            if (drop) {
                out[w++] = index; /* at most one per element: index only grows */
                index = end;
            }
            else
                index++;
        }
    }
    *nout = w;
    return 0;
}
