// CRC-32C with the CPU's own instructions. The target attributes enable the instructions for
// these functions only, so the package needs no global compiler flags and still runs (with the
// software fallback in Swift) on CPUs without them.
#include "navlog_crc32c.h"
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>

int navlog_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2")))
uint32_t navlog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t c = (uint32_t)~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = _mm_crc32_u8(c32, *p++);
        count--;
    }
    return ~c32;
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

int navlog_crc32c_hardware_available(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
}

__attribute__((target("crc")))
uint32_t navlog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint32_t c = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_aarch64_crc32cx(c, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        c = __builtin_aarch64_crc32cb(c, *p++);
        count--;
    }
    return ~c;
}

#else
int navlog_crc32c_hardware_available(void) { return 0; }
uint32_t navlog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif
