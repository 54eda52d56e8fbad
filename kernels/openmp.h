// OpenMP's runtime calls, or their one-thread meaning in a build without
// OpenMP. The ThreadSanitizer build is one: libgomp is not instrumented, so
// TSan would take its barriers for races; there the parallel regions run on
// the calling thread and TSan checks every thread the server itself starts.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_num_threads() { return 1; }
inline int omp_get_thread_num() { return 0; }
inline int omp_get_max_threads() { return 1; }
inline void omp_set_num_threads(int) {}
#endif
