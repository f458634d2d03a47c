#ifndef SWITCHYARD_CLIBUV_SHIM_H
#define SWITCHYARD_CLIBUV_SHIM_H
// libuv, and nothing else: only SwitchyardUV imports this module (and the C benchmark host). Every other syscall,
// and the C shim for macros and _GNU_SOURCE declarations, is SwitchyardSystem's (Sources/CSwitchyardSystem).
#include <uv.h>

#endif
