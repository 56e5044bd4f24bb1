/* trawl._native.Tokens, shared by tokens.c (the type) and terms.c (its user). */
#ifndef TRAWL_TOKENS_H
#define TRAWL_TOKENS_H

#include "native.h"
#include "xxh3.h"

/* A token's hash (any length; within this process only). */
static inline uint64_t
token_hash(const uint8_t *p, Py_ssize_t len)
{
    if (len <= XXH_SHORT_MAX)
        return xxh3_short(p, (size_t)len);
    /* A long token (rare): its first 240 bytes' hash, its length and its last bytes. */
    uint64_t h = xxh3_short(p, XXH_SHORT_MAX) ^ ((uint64_t)len * PRIME64_1);
    return h ^ rrmxmx(le64(p + len - 8), (uint64_t)len);
}

typedef struct {
    PyObject_HEAD
    char *text; /* the data lower-cased */
    Py_ssize_t n;
    Py_ssize_t *start;
    Py_ssize_t *size;
    uint64_t *hash;
    int32_t *first; /* each token's first equal token (tokens_first); NULL: not yet */
} TokensObject;

extern PyTypeObject TokensType;

/* The index of each token's first occurrence (first[k] == k: a token's first time),
 * computed on first use and kept: a page's thousands of tokens are a few hundred
 * words, each then looked up once in a Terms table (a large one, whose probes miss
 * the caches) instead of once per occurrence. 32-bit indices: a 10 MiB text's five
 * million tokens hold 20 MB here, not 40. NULL with an exception set on failure. */
const int32_t *tokens_first(TokensObject *self);

#endif
