#ifndef NAVLOG_CZSTD_SHIM_H
#define NAVLOG_CZSTD_SHIM_H
// Advanced parameters (ZSTD_c_checksumFlag, ZSTD_c_windowLog ...) are part of the stable API
// since zstd 1.4.0; the skippable-frame helpers need ZSTD_STATIC_LINKING_ONLY in 1.5.4 but we
// write skippable frames ourselves, so only the stable API is used.
#include <zstd.h>
#include <zstd_errors.h>
#endif
