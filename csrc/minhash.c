/* trawl._native: the MinHash signature of a text in one pass (trawl.dedup.minhash's hot path).
 *
 * signature(data, shingle, a, b, long_hash) -> bytes | None: ``data`` is a text as
 * ``shingles.token_bytes`` makes it (lower-cased UTF-8, separators made spaces); its
 * tokens (split on ASCII whitespace, as ``bytes.split()``) are hashed with XXH3-64
 * (seed 0; tokens over 240 bytes, rare, by ``long_hash``, the xxhash package's), the
 * shingles made as ``shingles.shingle_hashes`` makes them (position-rotated XOR,
 * fmix64), and for each permutation p the minimum over the shingles x of
 * (a[p] * x + b[p]) mod 2^64 is kept, its top 32 bits, as ``perms`` little-endian
 * uint32 (the signature; None for a text without tokens).
 *
 * The same values as the numpy path of minhash.py (tested equal), which makes a
 * Python bytes object and a call per word and three passes over a (perms x block)
 * array (multiply, add, minimum) where this loop keeps a tile of permutations' minima
 * in registers and reads each shingle once per tile: with AVX-512 (vpmullq, vpminuq)
 * eight permutations a step. Duplicate shingles are not dropped: they change no
 * minimum.
 *
 * minima(hashes, a, b) -> bytes: the minima step alone, over given shingle hashes.
 *
 * Optional: when trawl._native is not built, minhash.py computes the same in numpy.
 */
#include "native.h"
#include "xxh3.h"

#define TILE 32 /* permutations whose minima stay in registers */

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#else
#define CLONES
#endif

CLONES static void
tile_minima(const uint64_t *x, Py_ssize_t n, const uint64_t *a, const uint64_t *b,
            uint64_t *low)
{
    uint64_t ta[TILE], tb[TILE], tl[TILE];
    memcpy(ta, a, sizeof ta);
    memcpy(tb, b, sizeof tb);
    for (int p = 0; p < TILE; p++)
        tl[p] = UINT64_MAX;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint64_t v = x[i];
        for (int p = 0; p < TILE; p++) {
            const uint64_t h = ta[p] * v + tb[p]; /* mod 2^64 */
            tl[p] = h < tl[p] ? h : tl[p];
        }
    }
    memcpy(low, tl, sizeof tl);
}

static void
rest_minima(const uint64_t *x, Py_ssize_t n, const uint64_t *a, const uint64_t *b,
            uint64_t *low, Py_ssize_t count)
{
    for (Py_ssize_t p = 0; p < count; p++) {
        uint64_t m = UINT64_MAX;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint64_t h = a[p] * x[i] + b[p];
            m = h < m ? h : m;
        }
        low[p] = m;
    }
}

/* -- tokens and shingles --------------------------------------------------------- */

/* bytes.split()'s separators: ASCII whitespace. */
static inline int
is_space(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r'); /* \t \n \v \f \r */
}

/* The XXH3-64 of every token of data, in order, into a new array (*count of them);
 * NULL with an exception set on failure. */
static uint64_t *
token_hashes(const uint8_t *data, Py_ssize_t len, PyObject *long_hash, Py_ssize_t *count)
{
    /* At most one token per two bytes (a byte and a separator), and one more. */
    uint64_t *h = PyMem_Malloc((size_t)(len / 2 + 1) * sizeof(uint64_t));
    if (h == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t n = 0, i = 0;
    for (;;) {
        while (i < len && is_space(data[i]))
            i++;
        if (i == len)
            break;
        const Py_ssize_t start = i;
        while (i < len && !is_space(data[i]))
            i++;
        const size_t size = (size_t)(i - start);
        if (size <= XXH_SHORT_MAX) {
            h[n++] = xxh3_short(data + start, size);
            continue;
        }
        PyObject *v = PyObject_CallFunction(long_hash, "y#", (const char *)data + start,
                                            (Py_ssize_t)size);
        const uint64_t value = v == NULL ? 0 : PyLong_AsUnsignedLongLong(v);
        Py_XDECREF(v);
        if (PyErr_Occurred()) {
            PyMem_Free(h);
            return NULL;
        }
        h[n++] = value;
    }
    *count = n;
    return h;
}

#define ROTATE 23 /* shingles.py's _ROTATE */

/* shingles.shingle_hashes before its sort and dedup, in place over h: the hash of
 * each run of size tokens (size already clamped to 1..n); returns how many. */
static Py_ssize_t
shingles(uint64_t *h, Py_ssize_t n, int size)
{
    const Py_ssize_t count = n - size + 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t x = h[i];
        for (int j = 1; j < size; j++)
            x ^= rotl64(h[i + j], (j * ROTATE) % 64);
        x ^= x >> 33;
        x *= 0xFF51AFD7ED558CCDULL;
        x ^= x >> 33;
        x *= 0xC4CEB9FE1A85EC53ULL;
        x ^= x >> 33;
        h[i] = x; /* h[i] is read by no later shingle */
    }
    return count;
}

static int
words_of(Py_buffer *view, const char *what, Py_ssize_t *count)
{
    if (view->len % 8 != 0) {
        PyErr_Format(PyExc_ValueError, "%s: not a whole number of uint64", what);
        return -1;
    }
    *count = view->len / 8;
    return 0;
}

/* The signature of shingle hashes x[0:n] under the perms (a, b) pairs of av, bv; x
 * is scratch (overwritten). Returns a new bytes object, or NULL with an exception. */
static PyObject *
signature_of(uint64_t *x, Py_ssize_t n, Py_buffer *av, Py_buffer *bv)
{
    Py_ssize_t perms, pb;
    if (words_of(av, "a", &perms) || words_of(bv, "b", &pb))
        return NULL;
    if (pb != perms) {
        PyErr_SetString(PyExc_ValueError, "a and b differ in length");
        return NULL;
    }
    /* Copies: aligned, and the loops may assume no aliasing. */
    const size_t bytes = (size_t)(perms ? perms : 1) * sizeof(uint64_t);
    uint64_t *a = PyMem_Malloc(bytes), *b = PyMem_Malloc(bytes), *low = PyMem_Malloc(bytes);
    PyObject *out = NULL;
    if (a == NULL || b == NULL || low == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(a, av->buf, (size_t)perms * 8);
    memcpy(b, bv->buf, (size_t)perms * 8);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0;
    for (; p + TILE <= perms; p += TILE)
        tile_minima(x, n, a + p, b + p, low + p);
    rest_minima(x, n, a + p, b + p, low + p, perms - p);
    Py_END_ALLOW_THREADS
    out = PyBytes_FromStringAndSize(NULL, perms * 4);
    if (out != NULL) {
        unsigned char *s = (unsigned char *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < perms; i++) {
            const uint32_t top = (uint32_t)(low[i] >> 32);
            s[4 * i] = (unsigned char)top;
            s[4 * i + 1] = (unsigned char)(top >> 8);
            s[4 * i + 2] = (unsigned char)(top >> 16);
            s[4 * i + 3] = (unsigned char)(top >> 24);
        }
    }
done:
    PyMem_Free(a);
    PyMem_Free(b);
    PyMem_Free(low);
    return out;
}

PyObject *
native_minima(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer hv, av, bv;
    Py_ssize_t n;
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*:minima", &hv, &av, &bv))
        return NULL;
    if (words_of(&hv, "hashes", &n) == 0) {
        uint64_t *x = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
        if (x == NULL) {
            PyErr_NoMemory();
        } else {
            memcpy(x, hv.buf, (size_t)n * 8);
            out = signature_of(x, n, &av, &bv);
            PyMem_Free(x);
        }
    }
    PyBuffer_Release(&hv);
    PyBuffer_Release(&av);
    PyBuffer_Release(&bv);
    return out;
}

PyObject *
native_signature(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer data, av, bv;
    int size;
    PyObject *long_hash;
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "y*iy*y*O:signature", &data, &size, &av, &bv, &long_hash))
        return NULL;
    Py_ssize_t n = 0;
    uint64_t *h = token_hashes(data.buf, data.len, long_hash, &n);
    if (h != NULL) {
        if (n == 0) {
            out = Py_NewRef(Py_None);
        } else {
            const int clamped = size < 1 ? 1 : (size > n ? (int)n : size);
            out = signature_of(h, shingles(h, n, clamped), &av, &bv);
        }
        PyMem_Free(h);
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&av);
    PyBuffer_Release(&bv);
    return out;
}
