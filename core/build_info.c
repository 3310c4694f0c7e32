/* What built this library: version, compiler, build type. */
#include "core/error.h"

#ifndef OPTIC_BUILD_TYPE
#define OPTIC_BUILD_TYPE "unknown"
#endif

const char *optic_version(void) { return OPTIC_VERSION_STRING; }

const char *optic_build_compiler(void) {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown compiler";
#endif
}

const char *optic_build_type(void) { return OPTIC_BUILD_TYPE; }
