/* trawl._native.bloom_add / bloom_test: the index volumes' term filters
 * (trawl.index.terms), a Bloom filter over 64-bit hashes. Hash h sets (or tests) the
 * bits (low + p * step) mod nbits for p in 0..probes-1, low = h & 0xffffffff, step =
 * (h >> 32) | 1 (double hashing), bit k being bit k & 7 of byte k >> 3. Hashes come as
 * little-endian uint64, as the volume's terms file holds them. */
#include "native.h"

#include <string.h>

static uint64_t
load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Probe p of hash v: its bit in a filter of size bits (double hashing). */
static inline uint64_t
probe(uint64_t v, int p, uint64_t size)
{
    return ((v & 0xffffffffu) + (uint64_t)p * ((v >> 32) | 1)) % size;
}

/* Parses (bits, hashes, probes); bits writable when asked. */
static int
bloom_args(PyObject *args, Py_buffer *bits, Py_buffer *hashes, int *probes, int writable)
{
    if (!PyArg_ParseTuple(args, writable ? "w*y*i" : "y*y*i", bits, hashes, probes))
        return -1;
    if (bits->len <= 0 || hashes->len % 8 != 0 || *probes < 1) {
        PyErr_SetString(PyExc_ValueError,
                        "bloom: bits must not be empty, hashes whole uint64, probes >= 1");
        PyBuffer_Release(bits);
        PyBuffer_Release(hashes);
        return -1;
    }
    return 0;
}

PyObject *
native_bloom_add(PyObject *module, PyObject *args)
{
    Py_buffer bits, hashes;
    int probes;
    if (bloom_args(args, &bits, &hashes, &probes, 1) < 0)
        return NULL;
    uint8_t *b = bits.buf;
    const uint8_t *h = hashes.buf;
    const uint64_t size = (uint64_t)bits.len * 8;
    const Py_ssize_t n = hashes.len / 8;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t v = load_le64(h + 8 * i); /* once: b's stores may alias h */
        for (int p = 0; p < probes; p++) {
            const uint64_t at = probe(v, p, size);
            b[at >> 3] |= (uint8_t)(1u << (at & 7));
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bits);
    PyBuffer_Release(&hashes);
    Py_RETURN_NONE;
}

PyObject *
native_bloom_test(PyObject *module, PyObject *args)
{
    Py_buffer bits, hashes;
    int probes;
    if (bloom_args(args, &bits, &hashes, &probes, 0) < 0)
        return NULL;
    const Py_ssize_t n = hashes.len / 8;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out != NULL) {
        uint8_t *o = (uint8_t *)PyBytes_AS_STRING(out);
        const uint8_t *b = bits.buf, *h = hashes.buf;
        const uint64_t size = (uint64_t)bits.len * 8;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint64_t v = load_le64(h + 8 * i);
            uint8_t all = 1;
            for (int p = 0; p < probes && all; p++) {
                const uint64_t at = probe(v, p, size);
                all = (b[at >> 3] >> (at & 7)) & 1;
            }
            o[i] = all;
        }
    }
    PyBuffer_Release(&bits);
    PyBuffer_Release(&hashes);
    return out;
}
