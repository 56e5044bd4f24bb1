/* XXH3-64 with seed 0 for inputs up to 240 bytes: xxhash.h 0.8's short paths, the
 * same values as the xxhash package's xxh3_64_intdigest (tested at every length).
 * Longer inputs are hashed by the caller with the xxhash package.
 *
 * Derived from xxHash (https://github.com/Cyan4973/xxHash), BSD 2-Clause License,
 * Copyright (C) 2012-2023 Yann Collet: redistributions of source code must retain
 * this copyright notice, this list of conditions and the following disclaimer. */
#ifndef TRAWL_XXH3_H
#define TRAWL_XXH3_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const uint8_t XXH3_SECRET[192] = {
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
static inline uint64_t
xxh3_short(const uint8_t *in, size_t len)
{
    if (len > 128) {
        uint64_t acc = len * PRIME64_1;
        const int rounds = (int)len / 16;
        for (int i = 0; i < 8; i++)
            acc += mix16(in + 16 * i, XXH3_SECRET + 16 * i);
        acc = xxh3_avalanche(acc);
        for (int i = 8; i < rounds; i++)
            acc += mix16(in + 16 * i, XXH3_SECRET + 16 * (i - 8) + 3);
        acc += mix16(in + len - 16, XXH3_SECRET + 136 - 17);
        return xxh3_avalanche(acc);
    }
    if (len > 16) {
        uint64_t acc = len * PRIME64_1;
        if (len > 32) {
            if (len > 64) {
                if (len > 96) {
                    acc += mix16(in + 48, XXH3_SECRET + 96);
                    acc += mix16(in + len - 64, XXH3_SECRET + 112);
                }
                acc += mix16(in + 32, XXH3_SECRET + 64);
                acc += mix16(in + len - 48, XXH3_SECRET + 80);
            }
            acc += mix16(in + 16, XXH3_SECRET + 32);
            acc += mix16(in + len - 32, XXH3_SECRET + 48);
        }
        acc += mix16(in, XXH3_SECRET);
        acc += mix16(in + len - 16, XXH3_SECRET + 16);
        return xxh3_avalanche(acc);
    }
    if (len > 8) {
        const uint64_t lo = le64(in) ^ (le64(XXH3_SECRET + 24) ^ le64(XXH3_SECRET + 32));
        const uint64_t hi = le64(in + len - 8) ^ (le64(XXH3_SECRET + 40) ^ le64(XXH3_SECRET + 48));
        return xxh3_avalanche(len + swap64(lo) + hi + mul128_fold64(lo, hi));
    }
    if (len >= 4) {
        const uint64_t in64 = le32(in + len - 4) + ((uint64_t)le32(in) << 32);
        return rrmxmx(in64 ^ (le64(XXH3_SECRET + 8) ^ le64(XXH3_SECRET + 16)), len);
    }
    if (len) {
        const uint32_t combined = ((uint32_t)in[0] << 16) | ((uint32_t)in[len >> 1] << 24) |
                                  (uint32_t)in[len - 1] | ((uint32_t)len << 8);
        return xxh64_avalanche((uint64_t)combined ^ (uint64_t)(le32(XXH3_SECRET) ^ le32(XXH3_SECRET + 4)));
    }
    return xxh64_avalanche(le64(XXH3_SECRET + 56) ^ le64(XXH3_SECRET + 64));
}

#endif
