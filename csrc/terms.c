/* trawl._native.Terms: the index writer's per-token work without a Python object
 * per token (trawl.index.stems and trawl.index.lexicon), over Tokens (tokens.c).
 *
 * Terms(): a table of bytes keys (tokens) to bytes values (what stands for a token in
 * the text given to the writer) or None (a set: the lexicon's known words), open
 * addressing over the tokens' hashes. ``missing(tokens)`` lists the distinct tokens
 * not in the table (a page's few new words), ``join(tokens)`` makes the page's text of
 * values: what a Python dict lookup per token and a join did, several times over.
 */
#include "tokens.h"

/* -- Terms ------------------------------------------------------------------------- */

typedef struct {
    uint64_t hash;
    PyObject *key;   /* bytes; NULL: an empty slot */
    PyObject *value; /* bytes or None */
} Slot;

typedef struct {
    PyObject_HEAD
    Slot *slots;
    Py_ssize_t mask; /* slots - 1, a power of two less one */
    Py_ssize_t used;
} TermsObject;

#define MIN_SLOTS 64

static Slot *
alloc_slots(Py_ssize_t count)
{
    Slot *s = PyMem_Calloc((size_t)count, sizeof(Slot));
    if (s == NULL)
        PyErr_NoMemory();
    return s;
}

static void
drop_slots(Slot *slots, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_XDECREF(slots[i].key);
        Py_XDECREF(slots[i].value);
    }
    PyMem_Free(slots);
}

/* The slot of (p, len, hash): its entry, or the empty slot where it would go. */
static inline Slot *
find_slot(TermsObject *self, const char *p, Py_ssize_t len, uint64_t hash)
{
    Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)self->mask);
    for (;;) {
        Slot *s = &self->slots[i];
        if (s->key == NULL)
            return s;
        if (s->hash == hash && PyBytes_GET_SIZE(s->key) == len &&
            memcmp(PyBytes_AS_STRING(s->key), p, (size_t)len) == 0)
            return s;
        i = (i + 1) & self->mask;
    }
}

static int
grow(TermsObject *self)
{
    const Py_ssize_t old_count = self->mask + 1, count = old_count * 2;
    Slot *old = self->slots, *slots = alloc_slots(count);
    if (slots == NULL)
        return -1;
    self->slots = slots;
    self->mask = count - 1;
    for (Py_ssize_t i = 0; i < old_count; i++) {
        if (old[i].key == NULL)
            continue;
        Py_ssize_t j = (Py_ssize_t)(old[i].hash & (uint64_t)self->mask);
        while (slots[j].key != NULL)
            j = (j + 1) & self->mask;
        slots[j] = old[i];
    }
    PyMem_Free(old);
    return 0;
}

static PyObject *
terms_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Terms() takes no arguments");
        return NULL;
    }
    TermsObject *self = (TermsObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->slots = alloc_slots(MIN_SLOTS);
    if (self->slots == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->mask = MIN_SLOTS - 1;
    return (PyObject *)self;
}

static void
terms_free(TermsObject *self)
{
    if (self->slots != NULL)
        drop_slots(self->slots, self->mask + 1);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
check_key(PyObject *key)
{
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "Terms keys are bytes");
        return -1;
    }
    return 0;
}

static Slot *
slot_of_key(TermsObject *self, PyObject *key)
{
    const Py_ssize_t len = PyBytes_GET_SIZE(key);
    const char *p = PyBytes_AS_STRING(key);
    return find_slot(self, p, len, token_hash((const uint8_t *)p, len));
}

static int
terms_ass(TermsObject *self, PyObject *key, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "Terms entries are not deleted one by one: clear()");
        return -1;
    }
    if (check_key(key) < 0)
        return -1;
    if (value != Py_None && !PyBytes_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "Terms values are bytes or None");
        return -1;
    }
    if (2 * (self->used + 1) > self->mask + 1 && grow(self) < 0)
        return -1;
    Slot *s = slot_of_key(self, key);
    Py_INCREF(value);
    if (s->key == NULL) {
        const Py_ssize_t len = PyBytes_GET_SIZE(key);
        s->hash = token_hash((const uint8_t *)PyBytes_AS_STRING(key), len);
        s->key = Py_NewRef(key);
        self->used++;
    } else {
        Py_DECREF(s->value);
    }
    s->value = value;
    return 0;
}

static PyObject *
terms_subscript(TermsObject *self, PyObject *key)
{
    if (check_key(key) < 0)
        return NULL;
    Slot *s = slot_of_key(self, key);
    if (s->key == NULL) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return Py_NewRef(s->value);
}

static int
terms_contains(TermsObject *self, PyObject *key)
{
    if (check_key(key) < 0)
        return -1;
    return slot_of_key(self, key)->key != NULL;
}

static Py_ssize_t
terms_len(TermsObject *self)
{
    return self->used;
}

static PyObject *
terms_clear(TermsObject *self, PyObject *Py_UNUSED(ignored))
{
    Slot *fresh = alloc_slots(MIN_SLOTS);
    if (fresh == NULL)
        return NULL;
    Slot *old = self->slots;
    const Py_ssize_t count = self->mask + 1;
    self->slots = fresh;
    self->mask = MIN_SLOTS - 1;
    self->used = 0;
    drop_slots(old, count);
    Py_RETURN_NONE;
}

static PyObject *
terms_keys(TermsObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i <= self->mask; i++) {
        if (self->slots[i].key != NULL && PyList_Append(out, self->slots[i].key) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static TokensObject *
as_tokens(PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &TokensType)) {
        PyErr_SetString(PyExc_TypeError, "expected Tokens");
        return NULL;
    }
    return (TokensObject *)arg;
}

/* The distinct tokens (first occurrence first) not in the table. */
static PyObject *
terms_missing(TermsObject *self, PyObject *arg)
{
    TokensObject *t = as_tokens(arg);
    if (t == NULL)
        return NULL;
    const int32_t *first = tokens_first(t);
    if (first == NULL)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < t->n; k++) {
        if (first[k] != k)
            continue; /* looked up at its first occurrence */
        const char *p = t->text + t->start[k];
        const Py_ssize_t len = t->size[k];
        if (find_slot(self, p, len, t->hash[k])->key != NULL)
            continue;
        PyObject *b = PyBytes_FromStringAndSize(p, len);
        if (b == NULL || PyList_Append(out, b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(b);
    }
    return out;
}

/* The tokens' values (bytes each), joined by single spaces. */
static PyObject *
terms_join(TermsObject *self, PyObject *arg)
{
    TokensObject *t = as_tokens(arg);
    if (t == NULL)
        return NULL;
    const int32_t *first = tokens_first(t);
    if (first == NULL)
        return NULL;
    PyObject **values = PyMem_Malloc((size_t)(t->n ? t->n : 1) * sizeof(PyObject *));
    if (values == NULL)
        return PyErr_NoMemory();
    Py_ssize_t total = t->n ? t->n - 1 : 0;
    for (Py_ssize_t k = 0; k < t->n; k++) {
        if (first[k] != k) { /* first[k] < k: its value found already */
            values[k] = values[first[k]];
            total += PyBytes_GET_SIZE(values[k]);
            continue;
        }
        Slot *s = find_slot(self, t->text + t->start[k], t->size[k], t->hash[k]);
        if (s->key == NULL || !PyBytes_Check(s->value)) {
            PyObject *b = PyBytes_FromStringAndSize(t->text + t->start[k], t->size[k]);
            if (b != NULL) {
                PyErr_SetObject(s->key == NULL ? PyExc_KeyError : PyExc_TypeError, b);
                Py_DECREF(b);
            }
            PyMem_Free(values);
            return NULL;
        }
        values[k] = s->value;
        total += PyBytes_GET_SIZE(s->value);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out != NULL) {
        char *w = PyBytes_AS_STRING(out);
        for (Py_ssize_t k = 0; k < t->n; k++) {
            if (k)
                *w++ = ' ';
            const Py_ssize_t len = PyBytes_GET_SIZE(values[k]);
            memcpy(w, PyBytes_AS_STRING(values[k]), (size_t)len);
            w += len;
        }
    }
    PyMem_Free(values);
    return out;
}

static PyMethodDef terms_methods[] = {
    {"missing", (PyCFunction)terms_missing, METH_O,
     "missing(tokens) -> list[bytes]: the distinct tokens not held, first seen first."},
    {"join", (PyCFunction)terms_join, METH_O,
     "join(tokens) -> bytes: each token's value (bytes), joined by spaces."},
    {"clear", (PyCFunction)terms_clear, METH_NOARGS, "Drop every entry."},
    {"keys", (PyCFunction)terms_keys, METH_NOARGS, "The keys, as a list."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods terms_as_mapping = {
    .mp_length = (lenfunc)terms_len,
    .mp_subscript = (binaryfunc)terms_subscript,
    .mp_ass_subscript = (objobjargproc)terms_ass,
};

static PySequenceMethods terms_as_sequence = {.sq_contains = (objobjproc)terms_contains};

static PyTypeObject TermsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "trawl._native.Terms",
    .tp_basicsize = sizeof(TermsObject),
    .tp_dealloc = (destructor)terms_free,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Terms(): bytes tokens to bytes values or None (see csrc/terms.c).",
    .tp_new = terms_new,
    .tp_methods = terms_methods,
    .tp_as_mapping = &terms_as_mapping,
    .tp_as_sequence = &terms_as_sequence,
};

int
native_add_terms(PyObject *module)
{
    if (PyType_Ready(&TokensType) < 0 || PyType_Ready(&TermsType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "Tokens", (PyObject *)&TokensType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "Terms", (PyObject *)&TermsType) < 0)
        return -1;
    return 0;
}
