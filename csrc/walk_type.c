/* trawl._native.DomWalker: the C walk's Python face (see walk.c). One is made per
 * process with the Python tables and callables of trawl.parse._extract_dom; walk()
 * returns the lists of a Dom, or None when the page holds something the C walk does
 * not reproduce (the caller then walks it in Python). */
#include "walk.h"

#include <string.h>
#include <structmember.h>

static void
state_clear(walk_state *st)
{
    for (Py_ssize_t i = 0; i < st->n; i++) {
        Py_XDECREF(st->el[i].tag);
        Py_XDECREF(st->el[i].sig);
    }
    PyMem_Free(st->el);
    PyMem_Free(st->line_owner);
    PyMem_Free(st->line_links);
    Py_XDECREF(st->pieces);
    Py_XDECREF(st->line_text);
    Py_XDECREF(st->scratch.name);
}

/* The packed counter integer: sum of count[k] << 32k (W_BAIL past 32 bits a field,
 * which the Python walk would carry into the next field). */
static PyObject *
packed(const uint64_t *count)
{
    int wide = 0;
    for (int k = 1; k < N_COUNTERS; k++)
        wide |= count[k] != 0;
    if (!wide)
        return PyLong_FromUnsignedLongLong(count[0]);
    unsigned char bytes[4 * N_COUNTERS];
    for (int k = 0; k < N_COUNTERS; k++) {
        if (count[k] >> 32)
            return NULL;
        for (int b = 0; b < 4; b++)
            bytes[4 * k + b] = (unsigned char)(count[k] >> (8 * b));
    }
    return _PyLong_FromByteArray(bytes, sizeof(bytes), 1, 0);
}

/* A list of the n int64 values found stride bytes apart from first: a field of every
 * element (elem_ints), or a line array (stride 8). */
static PyObject *
int_list(const char *first, size_t stride, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
        int64_t v;
        memcpy(&v, first + (size_t)i * stride, sizeof(v));
        PyObject *o = PyLong_FromLongLong(v);
        if (o == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, o);
    }
    return list;
}

#define elem_ints(st, field)                                                                \
    int_list((st)->n ? (const char *)&(st)->el->field : NULL, sizeof(elem), (st)->n)
#define line_ints(st, array) int_list((const char *)(st)->array, sizeof(int64_t), (st)->nlines)

/* The Dom's lists, in its fields' order: (tag, parent, end, flags, inherited, weight,
 * signature, chars, link_chars, counts, line_text, line_owner, line_links). */
static PyObject *
dom_lists(walk_state *st)
{
    PyObject *tags = PyList_New(st->n), *sigs = PyList_New(st->n), *counts = PyList_New(st->n);
    if (tags == NULL || sigs == NULL || counts == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < st->n; i++) {
        elem *e = &st->el[i];
        PyObject *c = packed(e->count);
        if (c == NULL) {
            if (PyErr_Occurred())
                goto fail;
            Py_DECREF(tags);
            Py_DECREF(sigs);
            Py_DECREF(counts);
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(counts, i, c);
        PyList_SET_ITEM(tags, i, Py_NewRef(e->tag));
        PyList_SET_ITEM(sigs, i, Py_NewRef(e->sig ? e->sig : st->w->empty));
    }
    return Py_BuildValue("(NNNNNNNNNNONN)", tags, elem_ints(st, parent), elem_ints(st, end),
                         elem_ints(st, flags), elem_ints(st, inherited), elem_ints(st, weight),
                         sigs, elem_ints(st, chars), elem_ints(st, links), counts,
                         st->line_text, line_ints(st, line_owner), line_ints(st, line_links));
fail:
    Py_XDECREF(tags);
    Py_XDECREF(sigs);
    Py_XDECREF(counts);
    return NULL;
}

static lx_node *
node_of(PyObject *address)
{
    void *p = PyLong_AsVoidPtr(address);
    if (p == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a NULL node");
    return p;
}

static PyObject *
walker_walk(Walker *self, PyObject *args)
{
    PyObject *address, *verdicts, *token_cache;
    Py_ssize_t max_elements;
    if (!PyArg_ParseTuple(args, "OnO!O!", &address, &max_elements, &PyDict_Type, &verdicts,
                          &PyDict_Type, &token_cache))
        return NULL;
    lx_node *start = node_of(address);
    if (start == NULL)
        return NULL;
    walk_state st;
    memset(&st, 0, sizeof(st));
    st.w = self;
    st.owner = -1;
    st.pieces = PyList_New(0);
    st.line_text = PyList_New(0);
    PyObject *out = NULL;
    if (st.pieces != NULL && st.line_text != NULL) {
        int rc = walk_run(&st, start, max_elements, verdicts, token_cache);
        if (rc == 0)
            rc = walk_finish(&st, verdicts, token_cache);
        if (rc == W_BAIL)
            out = Py_NewRef(Py_None);
        else if (rc == 0 && (out = dom_lists(&st)) != NULL && out != Py_None)
            self->walks++;
    }
    state_clear(&st);
    return out;
}

static PyObject *
walker_check(Walker *self, PyObject *address)
{
    lx_node *start = node_of(address);
    if (start == NULL)
        return NULL;
    return PyBool_FromLong(lexbor_view_check(&self->api, start));
}

static int
walker_init(Walker *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"library", "kind", "skipped", "own", "boilerplate_tags",
                            "hidden_tokens", "boilerplate_roles", "boilerplate_flag",
                            "verdict", "style_search", NULL};
    const char *library;
    PyObject *kind, *skipped, *own, *tags, *tokens, *roles, *verdict, *search;
    long flag;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO!O!O!O!O!O!lOO", names, &library,
                                     &PyDict_Type, &kind, &PyDict_Type, &skipped, &PyDict_Type,
                                     &own, &PyFrozenSet_Type, &tags, &PyFrozenSet_Type, &tokens,
                                     &PyFrozenSet_Type, &roles, &flag, &verdict, &search))
        return -1;
    if (self->slots != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "DomWalker is initialised once");
        return -1;
    }
    if (lexbor_view_open(library, &self->api) < 0)
        return -1;
    self->slots = PyMem_Calloc(TAG_SLOTS, sizeof(tag_slot));
    self->empty = PyUnicode_FromString("");
    self->space = PyUnicode_FromString(" ");
    self->newline = PyUnicode_FromString("\n");
    if (self->slots == NULL || self->empty == NULL || self->space == NULL
        || self->newline == NULL)
        return -1;
    PyObject *held[] = {kind, skipped, own, tags, tokens, roles, verdict, search};
    PyObject **slots[] = {&self->kind, &self->skipped, &self->own, &self->boiler_tags,
                          &self->hidden_tokens, &self->boiler_roles, &self->verdict,
                          &self->style_search};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
        *slots[i] = Py_NewRef(held[i]);
    self->boilerplate_flag = flag;
    return tag_info_fill(self, self->empty, &self->empty_info);
}

static void
walker_dealloc(Walker *self)
{
    tag_memo_clear(self);
    PyMem_Free(self->slots);
    Py_CLEAR(self->empty_info.name);
    PyObject **refs[] = {&self->kind, &self->skipped, &self->own, &self->boiler_tags,
                         &self->hidden_tokens, &self->boiler_roles, &self->verdict,
                         &self->style_search, &self->empty, &self->space, &self->newline};
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
        Py_CLEAR(*refs[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef walker_methods[] = {
    {"walk", (PyCFunction)walker_walk, METH_VARARGS,
     "walk(node_address, max_elements, verdicts, token_cache) -> tuple | None: the lists "
     "of a Dom, in its fields' order, for the subtree under the lxb_dom_node_t at "
     "node_address (LexborNode.mem_id; the caller keeps that node alive), or None when "
     "the Python walk must do this page."},
    {"check", (PyCFunction)walker_check, METH_O,
     "check(node_address) -> bool: the struct layout this module assumes reads the "
     "subtree as the library's own accessors do."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef walker_members[] = {
    {"walks", T_PYSSIZET, offsetof(Walker, walks), READONLY, "pages walked in C"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "trawl._native.DomWalker",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The extractor's DOM walk over selectolax's Lexbor nodes, in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)walker_init,
    .tp_dealloc = (destructor)walker_dealloc,
    .tp_methods = walker_methods,
    .tp_members = walker_members,
};

int
native_add_walker(PyObject *module)
{
    if (PyType_Ready(&WalkerType) < 0)
        return -1;
    Py_INCREF(&WalkerType);
    if (PyModule_AddObject(module, "DomWalker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(&WalkerType);
        return -1;
    }
    return 0;
}
