/* A read-only view of selectolax's Lexbor DOM from C, for the extractor's walk
 * (walk.c). Nothing here links against selectolax: the functions are looked up at run
 * time in the selectolax module the interpreter has already loaded, and the structs
 * mirror those of selectolax 1.0.2 (selectolax/lexbor.pxd), which the Python side only
 * trusts after lexbor_view_check() and an output comparison on a probe document. */
#ifndef TRAWL_LEXBOR_VIEW_H
#define TRAWL_LEXBOR_VIEW_H

#include "native.h"

/* lxb_dom_node_t */
typedef struct lx_node lx_node;
struct lx_node {
    void *events; /* lxb_dom_event_target_t */
    uintptr_t local_name;
    uintptr_t prefix;
    uintptr_t ns;
    void *owner_document;
    lx_node *next;
    lx_node *prev;
    lx_node *parent;
    lx_node *first_child;
    lx_node *last_child;
    void *user;
    int type; /* lxb_dom_node_type_t */
};

/* lexbor_str_t, and lxb_dom_character_data_t (a text node) */
typedef struct {
    unsigned char *data;
    size_t length;
} lx_str;

typedef struct {
    lx_node node;
    lx_str data;
} lx_chardata;

enum { LX_ELEMENT = 0x01, LX_TEXT = 0x03 };
/* Tag ids that selectolax names "-text", "-document", "-comment", "-doctype". */
enum { LX_TAG_TEXT = 2, LX_TAG_DOCUMENT = 3, LX_TAG_COMMENT = 4, LX_TAG_DOCTYPE = 5 };

/* The exported Lexbor functions used (the same ones selectolax's properties call). */
typedef struct {
    const unsigned char *(*element_qualified_name)(const void *element, size_t *len);
    void *(*element_first_attribute)(void *element);
    void *(*element_next_attribute)(void *attr);
    const unsigned char *(*attr_qualified_name)(void *attr, size_t *len);
    const unsigned char *(*attr_value)(void *attr, size_t *len);
    /* For lexbor_view_check() only: the accessors whose results the struct reads must
     * reproduce. */
    uintptr_t (*node_tag_id)(lx_node *node);
    lx_node *(*node_next)(lx_node *node);
    lx_node *(*node_first_child)(lx_node *node);
    int (*node_type)(lx_node *node);
    unsigned char *(*node_text_content)(lx_node *node, size_t *len);
} lx_api;

/* Fills api from the loaded module at path; -1 with a Python exception if it is not
 * loaded or lacks a function. */
int lexbor_view_open(const char *path, lx_api *api);

/* 1 when every node of the subtree under start reads the same through the structs as
 * through the library's accessors (node kinds, tag ids, links, text), else 0. */
int lexbor_view_check(const lx_api *api, lx_node *start);

#endif
