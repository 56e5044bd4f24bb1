/* The loop of trawl._native.DomWalker.walk (walk_type.c): trawl.parse._extract_dom.walk
 * in C, on selectolax's Lexbor nodes read in place (lexbor_view.h), so a page costs no
 * Python object per node.
 *
 * The loop below follows the Python walk statement by statement (same names, same
 * order), which is the reference: _extract_dom only uses this one after comparing the
 * two on a probe document, and the tests compare them on whole corpora. The rarer,
 * Python-heavy decisions call back into the Python the walk uses: the class/id verdict
 * of inline elements and the style regex. The walk is iterative: no recursion in C
 * either, whatever the depth. */
#include "walk.h"

#include <string.h>

/* The attributes the walk reads (the last of duplicates wins, as in a dict). */
enum { A_HIDDEN, A_STYLE, A_ARIA, A_CLASS, A_ID, A_ROLE, A_COUNT };
static const char *const attr_names[A_COUNT] = {"hidden", "style", "aria-hidden",
                                                "class",  "id",    "role"};

typedef struct {
    int any; /* the element has attributes at all */
    int present[A_COUNT];
    const unsigned char *value[A_COUNT]; /* NULL: None */
    size_t len[A_COUNT];
} attrs_seen;

static int
read_attrs(const lx_api *api, lx_node *node, attrs_seen *a)
{
    memset(a, 0, sizeof(*a));
    for (void *attr = api->element_first_attribute(node); attr != NULL;
         attr = api->element_next_attribute(attr)) {
        size_t len = 0, vlen = 0;
        const unsigned char *name = api->attr_qualified_name(attr, &len);
        if (name == NULL)
            return W_BAIL;
        a->any = 1;
        for (int i = 0; i < A_COUNT; i++) {
            if (len == strlen(attr_names[i]) && memcmp(name, attr_names[i], len) == 0) {
                a->present[i] = 1;
                a->value[i] = api->attr_value(attr, &vlen);
                a->len[i] = a->value[i] ? vlen : 0;
                break;
            }
        }
    }
    return 0;
}

static PyObject *
decode(const unsigned char *s, size_t n)
{
    return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "replace");
}

/* str.lower(), with ASCII done here. */
static PyObject *
lower(PyObject *s)
{
    if (!PyUnicode_IS_ASCII(s))
        return PyObject_CallMethod(s, "lower", NULL);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    PyObject *out = PyUnicode_New(n, 127);
    if (out == NULL)
        return NULL;
    const Py_UCS1 *in = PyUnicode_1BYTE_DATA(s);
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = 0; i < n; i++)
        o[i] = (Py_UCS1)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] + 32 : in[i]);
    return out;
}

/* f"{attrs.get('class') or ''} {attrs.get('id') or ''}", lower-cased when longer than
 * one character. */
static PyObject *
signature_of(const attrs_seen *a)
{
    PyObject *cls = decode(a->value[A_CLASS] ? a->value[A_CLASS] : (const unsigned char *)"",
                           a->len[A_CLASS]);
    PyObject *id = decode(a->value[A_ID] ? a->value[A_ID] : (const unsigned char *)"",
                          a->len[A_ID]);
    PyObject *sig = NULL;
    if (cls != NULL && id != NULL)
        sig = PyUnicode_FromFormat("%U %U", cls, id);
    Py_XDECREF(cls);
    Py_XDECREF(id);
    if (sig == NULL || PyUnicode_GET_LENGTH(sig) <= 1)
        return sig;
    PyObject *low = lower(sig);
    Py_DECREF(sig);
    return low;
}

/* not HIDDEN_TOKENS.isdisjoint(signature.split()) */
static int
has_hidden_token(Walker *w, PyObject *sig)
{
    PyObject *tokens = PyUnicode_Split(sig, NULL, -1);
    if (tokens == NULL)
        return W_ERROR;
    int found = 0;
    for (Py_ssize_t i = 0; found == 0 && i < PyList_GET_SIZE(tokens); i++)
        found = PySet_Contains(w->hidden_tokens, PyList_GET_ITEM(tokens, i));
    Py_DECREF(tokens);
    return found < 0 ? W_ERROR : found;
}

/* _verdict(signature, token_cache), memoised in verdicts: sets *hidden, *flags and
 * *weight. */
static int
verdict_of(Walker *w, PyObject *sig, PyObject *verdicts, PyObject *token_cache, int *hidden,
           long *flags, long *weight)
{
    PyObject *v = PyDict_GetItemWithError(verdicts, sig);
    if (v == NULL) {
        if (PyErr_Occurred())
            return W_ERROR;
        v = PyObject_CallFunctionObjArgs(w->verdict, sig, token_cache, NULL);
        if (v == NULL)
            return W_ERROR;
        int rc = PyDict_SetItem(verdicts, sig, v);
        Py_DECREF(v); /* the dict holds it */
        if (rc < 0)
            return W_ERROR;
    }
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 3)
        return W_BAIL;
    *hidden = PyObject_IsTrue(PyTuple_GET_ITEM(v, 0));
    if (*hidden < 0)
        return W_ERROR;
    *weight = PyLong_AsLong(PyTuple_GET_ITEM(v, 1));
    if (*weight == -1 && PyErr_Occurred())
        return W_ERROR;
    *flags = PyLong_AsLong(PyTuple_GET_ITEM(v, 2));
    if (*flags == -1 && PyErr_Occurred())
        return W_ERROR;
    return 0;
}

/* _is_hidden(attrs), for an element with one of hidden / style / aria-hidden. */
static int
attrs_hidden(Walker *w, const attrs_seen *a)
{
    if (a->present[A_HIDDEN])
        return 1;
    if (a->value[A_ARIA] && a->len[A_ARIA] == 4 && memcmp(a->value[A_ARIA], "true", 4) == 0)
        return 1;
    if (a->value[A_STYLE] == NULL || a->len[A_STYLE] == 0)
        return 0;
    PyObject *style = decode(a->value[A_STYLE], a->len[A_STYLE]);
    if (style == NULL)
        return W_ERROR;
    PyObject *match = PyObject_CallOneArg(w->style_search, style);
    Py_DECREF(style);
    if (match == NULL)
        return W_ERROR;
    int hidden = match != Py_None;
    Py_DECREF(match);
    return hidden;
}

/* role and role.lower() in BOILERPLATE_ROLES */
static int
boilerplate_role(Walker *w, const attrs_seen *a)
{
    if (a->value[A_ROLE] == NULL || a->len[A_ROLE] == 0)
        return 0;
    PyObject *role = decode(a->value[A_ROLE], a->len[A_ROLE]);
    PyObject *low = role ? lower(role) : NULL;
    Py_XDECREF(role);
    if (low == NULL)
        return W_ERROR;
    int found = PySet_Contains(w->boiler_roles, low);
    Py_DECREF(low);
    return found < 0 ? W_ERROR : found;
}

/* tags.append(tag) and the other lists of a recorded element. */
static int
record(walk_state *st, const tag_info *info, long flags, PyObject *sig)
{
    if (st->n == st->cap) {
        Py_ssize_t cap = st->cap ? 2 * st->cap : 256;
        elem *grown = PyMem_Realloc(st->el, (size_t)cap * sizeof(elem));
        if (grown == NULL) {
            PyErr_NoMemory();
            return W_ERROR;
        }
        st->el = grown;
        st->cap = cap;
    }
    elem *e = &st->el[st->n];
    memset(e, 0, sizeof(*e));
    e->tag = Py_NewRef(info->name);
    e->sig = Py_XNewRef(sig);
    e->parent = st->owner;
    e->end = st->n + 1;
    e->flags = flags;
    if (info->own >= 0)
        e->count[info->own] = 1;
    e->pre = info->pre;
    st->n++;
    return 0;
}

static int
flush_if_pieces(walk_state *st, int64_t in_pre)
{
    if (PyList_GET_SIZE(st->pieces) == 0)
        return 0;
    int rc = flush_line(st, in_pre > 0);
    st->link_len = 0;
    return rc;
}

/* What a block or inline element does (the last branch of the Python walk's tag
 * switch): *descend, *leaf, *closer and *opened_pre are its outputs. */
static int
element(walk_state *st, lx_node *node, const tag_info *info, Py_ssize_t max_elements,
        PyObject *verdicts, PyObject *token_cache, int64_t in_pre, int *descend, int *leaf,
        int64_t *closer, int *opened_pre)
{
    Walker *w = st->w;
    long flags = 0;
    PyObject *sig = NULL; /* "" */
    int go = 1, rc = 0;
    attrs_seen a;
    memset(&a, 0, sizeof(a));
    if (node->type == LX_ELEMENT && (rc = read_attrs(&w->api, node, &a)) != 0)
        return rc;
    if (a.any) {
        int top = st->owner < 0; /* the start node is never dropped */
        int hidden = 0;
        if (!top && (a.present[A_HIDDEN] || a.present[A_STYLE] || a.present[A_ARIA])
            && (hidden = attrs_hidden(w, &a)) < 0)
            return hidden;
        if (hidden) {
            go = 0;
        }
        else {
            if ((sig = signature_of(&a)) == NULL)
                return W_ERROR;
            if (PyUnicode_GET_LENGTH(sig) > 1) {
                if (info->kind == K_INLINE && !info->dash) {
                    int verdict_hidden = 0;
                    long weight = 0;
                    if ((rc = verdict_of(w, sig, verdicts, token_cache, &verdict_hidden, &flags,
                                         &weight)))
                        goto out;
                    if (top)
                        flags = 0;
                    else if (verdict_hidden)
                        go = 0;
                }
                else if (!top) {
                    int found = has_hidden_token(w, sig);
                    if (found < 0) {
                        rc = found;
                        goto out;
                    }
                    go = !found;
                }
            }
            int role = boilerplate_role(w, &a);
            if (role < 0) {
                rc = role;
                goto out;
            }
            if (role)
                flags |= w->boilerplate_flag;
        }
    }
    if (go) {
        *descend = 1;
        if (info->boiler)
            flags |= w->boilerplate_flag;
        if (flags || info->kind == K_BLOCK || info->dash || st->owner < 0) {
            if (st->n >= max_elements) {
                *descend = 0;
            }
            else {
                if ((rc = flush_if_pieces(st, in_pre)) != 0)
                    goto out;
                *closer = st->n;
                if ((rc = record(st, info, flags, sig)) != 0)
                    goto out;
                /* A landmark that is never the article is kept as a leaf. */
                *leaf = (flags & w->boilerplate_flag) && st->owner >= 0;
                st->owner = *closer;
                *opened_pre = info->pre;
            }
        }
    }
out:
    Py_XDECREF(sig);
    return rc;
}

/* str.isspace() of an ASCII character. */
static const unsigned char ascii_space[128] = {
    [9] = 1, [10] = 1, [11] = 1, [12] = 1, [13] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1, [32] = 1,
};

/* A text node's data (not empty). */
static int
text_piece(walk_state *st, const lx_str *d, int64_t in_link)
{
    int high = 0, word = 0;
    for (size_t i = 0; i < d->length; i++) {
        unsigned char c = d->data[i];
        high |= c >= 0x80;
        word |= c < 0x80 && !ascii_space[c];
    }
    PyObject *text = NULL;
    int space = !word;
    if (high && !word) {
        if ((text = decode(d->data, d->length)) == NULL)
            return W_ERROR;
        space = text_isspace(text);
    }
    if (space) {
        /* Indentation between tags: only a word separator inside a line. */
        Py_XDECREF(text);
        return PyList_GET_SIZE(st->pieces) ? PyList_Append(st->pieces, st->w->space) : 0;
    }
    if (text == NULL && (text = decode(d->data, d->length)) == NULL)
        return W_ERROR;
    int rc = PyList_Append(st->pieces, text);
    if (in_link)
        st->link_len += text_stripped_len(text);
    Py_DECREF(text);
    return rc;
}

typedef struct {
    lx_node *node;
    int64_t closer; /* a block index, -1 for an inline element, -2 for a link */
} frame;

static int
push(frame **stack, Py_ssize_t *sp, Py_ssize_t *cap, lx_node *node, int64_t closer)
{
    if (*sp == *cap) {
        Py_ssize_t grown_cap = *cap ? 2 * *cap : 256;
        frame *grown = PyMem_Realloc(*stack, (size_t)grown_cap * sizeof(frame));
        if (grown == NULL) {
            PyErr_NoMemory();
            return W_ERROR;
        }
        *stack = grown;
        *cap = grown_cap;
    }
    (*stack)[*sp].node = node;
    (*stack)[*sp].closer = closer;
    (*sp)++;
    return 0;
}

/* One element or other non-text node; *next_node is its first child to descend to. */
static int
visit(walk_state *st, lx_node *node, Py_ssize_t max_elements, PyObject *verdicts,
      PyObject *token_cache, int64_t *in_link, int64_t *in_pre, int64_t *closer_out,
      lx_node **next_node)
{
    Walker *w = st->w;
    const tag_info *info = &w->empty_info; /* node.tag or "" */
    if (node->type == LX_ELEMENT) {
        size_t len = 0;
        const unsigned char *name = w->api.element_qualified_name(node, &len);
        if (name != NULL && (info = tag_lookup(w, &st->scratch, name, len)) == NULL)
            return W_ERROR;
    }
    if (info->first_dash)
        return 0;
    int descend = 0, leaf = 0, opened_pre = 0, rc = 0;
    int64_t closer = -1;
    switch (info->kind) {
    case K_SKIP:
        if (st->owner >= 0 && info->skipped >= 0)
            st->el[st->owner].count[info->skipped]++;
        break;
    case K_BREAK:
        rc = flush_if_pieces(st, *in_pre);
        break;
    case K_IMAGE:
        if (st->owner >= 0)
            st->el[st->owner].count[C_IMAGES]++;
        break;
    case K_PLAIN:
        descend = 1;
        break;
    case K_LINK:
        descend = 1;
        closer = -2;
        (*in_link)++;
        break;
    default:
        rc = element(st, node, info, max_elements, verdicts, token_cache, *in_pre, &descend,
                     &leaf, &closer, &opened_pre);
        *in_pre += opened_pre;
    }
    if (rc != 0 || !descend)
        return rc;
    lx_node *child = leaf ? NULL : node->first_child;
    if (child != NULL) {
        *closer_out = closer;
        *next_node = child;
        return 0;
    }
    /* An element without children closes at once. */
    if (closer >= 0) {
        if ((rc = flush_if_pieces(st, *in_pre)) != 0)
            return rc;
        st->owner = st->el[closer].parent;
        *in_pre -= info->pre;
    }
    else if (closer == -2) {
        (*in_link)--;
    }
    return 0;
}

int
walk_run(walk_state *st, lx_node *start, Py_ssize_t max_elements, PyObject *verdicts,
         PyObject *token_cache)
{
    int64_t in_link = 0, in_pre = 0;
    frame *stack = NULL;
    Py_ssize_t sp = 0, cap = 0;
    int rc = 0;
    lx_node *node = start;
    while (node != NULL) {
        uintptr_t tag_id = node->local_name;
        if (tag_id == LX_TAG_TEXT) {
            const lx_str *d = &((lx_chardata *)node)->data;
            if (node->type == LX_TEXT && d->data != NULL && d->length > 0
                && (rc = text_piece(st, d, in_link)) != 0)
                goto done;
        }
        else if (tag_id != LX_TAG_DOCUMENT && tag_id != LX_TAG_COMMENT
                 && tag_id != LX_TAG_DOCTYPE) {
            lx_node *child = NULL;
            int64_t closer = -1;
            rc = visit(st, node, max_elements, verdicts, token_cache, &in_link, &in_pre,
                       &closer, &child);
            if (rc != 0)
                goto done;
            if (child != NULL) {
                if ((rc = push(&stack, &sp, &cap, node, closer)) != 0)
                    goto done;
                node = child;
                continue;
            }
        }
        if (sp == 0)
            break;
        /* Climb until a node has a next sibling, closing elements on the way. */
        lx_node *next = node->next;
        while (next == NULL && sp > 0) {
            sp--;
            node = stack[sp].node;
            int64_t closer = stack[sp].closer;
            if (closer >= 0) {
                if ((rc = flush_if_pieces(st, in_pre)) != 0)
                    goto done;
                st->el[closer].end = st->n;
                st->owner = st->el[closer].parent;
                in_pre -= st->el[closer].pre;
            }
            else if (closer == -2) {
                in_link--;
            }
            if (sp > 0)
                next = node->next;
        }
        node = sp > 0 ? next : NULL;
    }
    if (st->owner >= 0)
        rc = flush_if_pieces(st, in_pre);
done:
    PyMem_Free(stack);
    return rc;
}

int
walk_finish(walk_state *st, PyObject *verdicts, PyObject *token_cache)
{
    /* _accumulate: children have larger indices than their parents. */
    for (Py_ssize_t i = st->n - 1; i > 0; i--) {
        int64_t p = st->el[i].parent;
        if (p < 0 || p >= i)
            return W_BAIL; /* Python would index from the end: not reproduced */
        st->el[p].chars += st->el[i].chars;
        st->el[p].links += st->el[i].links;
        for (int k = 0; k < N_COUNTERS; k++)
            st->el[p].count[k] += st->el[i].count[k];
    }
    /* _judge_classes: class/id verdicts of the elements holding text, then flags
     * inherited down the tree. */
    for (Py_ssize_t i = 0; i < st->n; i++) {
        elem *e = &st->el[i];
        if (e->chars && e->sig != NULL && PyUnicode_GET_LENGTH(e->sig) > 1) {
            int hidden = 0;
            long flags = 0, weight = 0;
            int rc = verdict_of(st->w, e->sig, verdicts, token_cache, &hidden, &flags, &weight);
            if (rc != 0)
                return rc;
            e->weight = weight;
            if (i > 0) /* the start node is never flagged */
                e->flags |= flags;
        }
        e->inherited = e->flags | (i > 0 ? st->el[e->parent].inherited : 0);
    }
    return 0;
}
