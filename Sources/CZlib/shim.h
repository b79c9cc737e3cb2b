#ifndef NAVLOG_CZLIB_SHIM_H
#define NAVLOG_CZLIB_SHIM_H
// zlib for gzip exports (Debian: zlib1g-dev). deflateInit2 is a macro; Swift calls deflateInit2_.
#include <zlib.h>
#endif
