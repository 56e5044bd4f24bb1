/* The MinHash signature of a text in one native pass: trawl.dedup.minhash's hot path.
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
 * Optional: when this module is not built, minhash.py computes the same in numpy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

/* -- XXH3-64 with seed 0, inputs up to 240 bytes (xxhash.h 0.8, its short paths) ---- */

static const uint8_t SECRET[192] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

#define PRIME64_1 0x9E3779B185EBCA87ULL
#define PRIME64_2 0xC2B2AE3D27D4EB4FULL
#define PRIME64_3 0x165667B19E3779F9ULL
#define XXH_SHORT_MAX 240 /* longer tokens: long_hash */

static inline uint64_t
le64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
#endif
}

static inline uint32_t
le32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
#endif
}

static inline uint64_t
rotl64(uint64_t x, int r)
{
    return r ? (x << r) | (x >> (64 - r)) : x;
}

static inline uint64_t
swap64(uint64_t x)
{
    return __builtin_bswap64(x);
}

static inline uint64_t
mul128_fold64(uint64_t lhs, uint64_t rhs)
{
    const unsigned __int128 product = (unsigned __int128)lhs * rhs;
    return (uint64_t)product ^ (uint64_t)(product >> 64);
}

static inline uint64_t
xxh64_avalanche(uint64_t h)
{
    h ^= h >> 33;
    h *= PRIME64_2;
    h ^= h >> 29;
    h *= PRIME64_3;
    h ^= h >> 32;
    return h;
}

static inline uint64_t
xxh3_avalanche(uint64_t h)
{
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    h ^= h >> 32;
    return h;
}

static inline uint64_t
rrmxmx(uint64_t h, uint64_t len)
{
    h ^= rotl64(h, 49) ^ rotl64(h, 24);
    h *= 0x9FB21C651E98DF25ULL;
    h ^= (h >> 35) + len;
    h *= 0x9FB21C651E98DF25ULL;
    return h ^ (h >> 28);
}

static inline uint64_t
mix16(const uint8_t *in, const uint8_t *secret)
{
    return mul128_fold64(le64(in) ^ le64(secret), le64(in + 8) ^ le64(secret + 8));
}

/* XXH3_64bits(in, len) for len <= 240 (seed 0, the default secret). */
static uint64_t
xxh3_short(const uint8_t *in, size_t len)
{
    if (len > 128) {
        uint64_t acc = len * PRIME64_1;
        const int rounds = (int)len / 16;
        for (int i = 0; i < 8; i++)
            acc += mix16(in + 16 * i, SECRET + 16 * i);
        acc = xxh3_avalanche(acc);
        for (int i = 8; i < rounds; i++)
            acc += mix16(in + 16 * i, SECRET + 16 * (i - 8) + 3);
        acc += mix16(in + len - 16, SECRET + 136 - 17);
        return xxh3_avalanche(acc);
    }
    if (len > 16) {
        uint64_t acc = len * PRIME64_1;
        if (len > 32) {
            if (len > 64) {
                if (len > 96) {
                    acc += mix16(in + 48, SECRET + 96);
                    acc += mix16(in + len - 64, SECRET + 112);
                }
                acc += mix16(in + 32, SECRET + 64);
                acc += mix16(in + len - 48, SECRET + 80);
            }
            acc += mix16(in + 16, SECRET + 32);
            acc += mix16(in + len - 32, SECRET + 48);
        }
        acc += mix16(in, SECRET);
        acc += mix16(in + len - 16, SECRET + 16);
        return xxh3_avalanche(acc);
    }
    if (len > 8) {
        const uint64_t lo = le64(in) ^ (le64(SECRET + 24) ^ le64(SECRET + 32));
        const uint64_t hi = le64(in + len - 8) ^ (le64(SECRET + 40) ^ le64(SECRET + 48));
        return xxh3_avalanche(len + swap64(lo) + hi + mul128_fold64(lo, hi));
    }
    if (len >= 4) {
        const uint64_t in64 = le32(in + len - 4) + ((uint64_t)le32(in) << 32);
        return rrmxmx(in64 ^ (le64(SECRET + 8) ^ le64(SECRET + 16)), len);
    }
    if (len) {
        const uint32_t combined = ((uint32_t)in[0] << 16) | ((uint32_t)in[len >> 1] << 24) |
                                  (uint32_t)in[len - 1] | ((uint32_t)len << 8);
        return xxh64_avalanche((uint64_t)combined ^ (uint64_t)(le32(SECRET) ^ le32(SECRET + 4)));
    }
    return xxh64_avalanche(le64(SECRET + 56) ^ le64(SECRET + 64));
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

static PyObject *
minima(PyObject *Py_UNUSED(module), PyObject *args)
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

static PyObject *
signature(PyObject *Py_UNUSED(module), PyObject *args)
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

static PyMethodDef methods[] = {
    {"minima", minima, METH_VARARGS,
     "minima(hashes, a, b) -> bytes: the top 32 bits of min (a*x + b mod 2^64) over the "
     "shingle hashes x, per permutation, little-endian uint32 each (buffers of native "
     "uint64)."},
    {"signature", signature, METH_VARARGS,
     "signature(data, shingle, a, b, long_hash) -> bytes | None: the MinHash signature "
     "of the tokens of data (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_minhash", "The MinHash signature of a text, native.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__minhash(void)
{
    return PyModule_Create(&module);
}
