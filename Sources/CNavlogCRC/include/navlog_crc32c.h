#ifndef NAVLOG_CRC32C_H
#define NAVLOG_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// Whether this CPU computes CRC-32C in hardware (x86-64 SSE4.2, or AArch64 CRC).
int navlog_crc32c_hardware_available(void);

/// Continues a running CRC-32C (start with 0) over `count` bytes with the CPU's CRC
/// instructions. Call only when navlog_crc32c_hardware_available() returned 1.
uint32_t navlog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#endif
