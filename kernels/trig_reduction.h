// Payne-Hanek argument reduction for sin/cos of large fp32 arguments: exact in
// the bits of 2/pi, so sin(1e30f) is as accurate as sin(1.0f). One plain C++
// function that every SIMD path calls for its large lanes (vector_math_body.h).
#pragma once

namespace npu::kernels {

// x (2/pi) = q + f with q an integer and |f| <= 1/2, for finite x with
// |x| >= 1: returns f pi/2 (|r| <= pi/4, relative error ~2^-52) and q mod 4.
double ReduceHalfPi(float x, int* quadrant);

}  // namespace npu::kernels
