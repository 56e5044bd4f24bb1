/* Finding Lexbor's functions in the loaded selectolax module, and checking that the
 * struct mirrors of lexbor_view.h read what the library's own accessors return. */
#include "lexbor_view.h"

#include <dlfcn.h>
#include <string.h>

static int
find(void *lib, const char *name, void **out)
{
    *out = dlsym(lib, name);
    if (*out == NULL) {
        PyErr_Format(PyExc_ImportError, "Lexbor function %s not found", name);
        return -1;
    }
    return 0;
}

int
lexbor_view_open(const char *path, lx_api *api)
{
    /* RTLD_NOLOAD: only a module Python has loaded already (its DOMs are the ones the
     * walk reads); the handle is never closed, the module is never unloaded. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        PyErr_Format(PyExc_ImportError, "selectolax module not loaded: %s", path);
        return -1;
    }
    struct {
        const char *name;
        void **slot;
    } want[] = {
        {"lxb_dom_element_qualified_name", (void **)&api->element_qualified_name},
        {"lxb_dom_element_first_attribute_noi", (void **)&api->element_first_attribute},
        {"lxb_dom_element_next_attribute_noi", (void **)&api->element_next_attribute},
        {"lxb_dom_attr_qualified_name", (void **)&api->attr_qualified_name},
        {"lxb_dom_attr_value_noi", (void **)&api->attr_value},
        {"lxb_dom_node_tag_id_noi", (void **)&api->node_tag_id},
        {"lxb_dom_node_next_noi", (void **)&api->node_next},
        {"lxb_dom_node_first_child_noi", (void **)&api->node_first_child},
        {"lxb_dom_node_type_noi", (void **)&api->node_type},
        {"lxb_dom_node_text_content", (void **)&api->node_text_content},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (find(lib, want[i].name, want[i].slot) < 0)
            return -1;
    return 0;
}

/* One node: every field the walk reads directly, against the accessor. Pointers are
 * compared, never followed, before they are known to agree. */
static int
node_agrees(const lx_api *api, lx_node *node)
{
    if (node->local_name != api->node_tag_id(node) || node->type != api->node_type(node)
        || node->next != api->node_next(node)
        || node->first_child != api->node_first_child(node))
        return 0;
    if (node->type != LX_TEXT)
        return 1;
    /* A copy of the text, from the document's text arena (freed with the document:
     * this runs on a small probe only). */
    size_t len = 0;
    unsigned char *copy = api->node_text_content(node, &len);
    const lx_str *own = &((lx_chardata *)node)->data;
    if (copy == NULL)
        return own->data == NULL || own->length == 0;
    return own->length == len && own->data != NULL && memcmp(own->data, copy, len) == 0;
}

int
lexbor_view_check(const lx_api *api, lx_node *start)
{
    size_t cap = 64, depth = 0;
    lx_node **stack = PyMem_Malloc(cap * sizeof(*stack));
    if (stack == NULL)
        return 0;
    int ok = 1;
    lx_node *node = start;
    /* Pre-order through the accessors' own links: first child, else next sibling, else
     * the next sibling of the nearest ancestor that has one. */
    while (node != NULL && ok) {
        if (!node_agrees(api, node)) {
            ok = 0;
            break;
        }
        lx_node *child = api->node_first_child(node);
        if (child != NULL) {
            if (depth == cap) {
                lx_node **grown = PyMem_Realloc(stack, 2 * cap * sizeof(*stack));
                if (grown == NULL) {
                    ok = 0;
                    break;
                }
                stack = grown;
                cap *= 2;
            }
            stack[depth++] = node;
            node = child;
            continue;
        }
        lx_node *next = node == start ? NULL : api->node_next(node);
        while (next == NULL && depth > 0) {
            node = stack[--depth];
            next = depth > 0 ? api->node_next(node) : NULL;
        }
        node = next;
    }
    PyMem_Free(stack);
    return ok;
}
