// What the Vector kernel bodies (vector_*_body.h) use, included by each ISA's TU
// before its anonymous namespace: the bodies themselves are included inside it
// and must not include anything.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/half_lookup.h"
#include "kernels/trig_reduction.h"
#include "kernels/vector_kernel_sets.h"
#include "kernels/vector_math_coeffs.h"

// The bodies' small functions are inlined into the loops that call them, so
// that constants are hoisted and iterations overlap (GCC would otherwise call
// the larger ones per vector).
#define VECTOR_INLINE inline __attribute__((always_inline))
