// npu-bench gemm: the Cube GEMM (fp16 in, fp32 accumulate and out) side by side
// with the anchors measured in the same process, same shapes, same thread count:
// oneDNN f32 matmul (plain layouts, and with weights pre-packed once outside the
// timing), OpenBLAS cblas_sgemm, and the machine's fp32 FMA peak; ours both
// packing B in the call and with B pre-packed once (as constant weights are).
//
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE npu-bench gemm
//       [--shapes 256x256x256,512x3072x768] [--threads 1,2] [--reps 7]
//
// One JSON line per (shape, threads); an anchor that was not built prints null.
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_registry.h"
#include "kernels/cpu_features.h"
#include "kernels/cube_gemm.h"
#include "kernels/cube_packed_b.h"
#include "kernels/fp16.h"
#include "kernels/openmp.h"

#ifdef NPU_BENCH_HAVE_DNNL
#include <dnnl.hpp>
#endif
#ifdef NPU_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace npu::bench {
namespace {

using kernels::half_bits;

struct Shape {
  int64_t m, n, k;
};

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One contender: a callable doing one whole GEMM (or peak probe), set up
// beforehand, and the floating-point operations it performs.
struct Contender {
  std::function<void()> run;
  double flops = 0;
  std::vector<double> seconds;
};

// Runs the contenders round-robin, `reps` rounds after one warm-up round, and
// returns each one's median GFLOP/s. Round-robin rather than one after the other:
// the machine is shared and its load drifts, and interleaving exposes every
// contender to the same drift, so the ratios hold even when absolute figures move.
// A pause after each round lets OpenBLAS's spinning pthreads go to sleep before the
// next contender's team starts (otherwise they steal its cores).
std::vector<double> MedianGflopsRoundRobin(std::vector<Contender>& cs, int reps) {
  for (int r = -1; r < reps; ++r) {
    for (Contender& c : cs) {
      const double t0 = NowSeconds();
      c.run();
      if (r >= 0) c.seconds.push_back(NowSeconds() - t0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  std::vector<double> out;
  for (Contender& c : cs) {
    std::sort(c.seconds.begin(), c.seconds.end());
    out.push_back(c.flops / c.seconds[c.seconds.size() / 2] * 1e-9);
  }
  return out;
}

// fp32 FMA peak: independent chains (more than pipes x latency) on the widest
// vectors this CPU has, one team of `threads`.
__attribute__((target("avx512f"))) double FmaPeakAvx512(int64_t iters) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float out[16], sink = 0;
  for (int i = 0; i < 24; ++i) {
    _mm512_storeu_ps(out, acc[i]);
    sink += out[0];
  }
  __asm__ volatile("" : : "x"(sink));
  return static_cast<double>(iters) * 24 * 16 * 2;
}

__attribute__((target("avx2,fma"))) double FmaPeakAvx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  float out[8], sink = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_storeu_ps(out, acc[i]);
    sink += out[0];
  }
  __asm__ volatile("" : : "x"(sink));
  return static_cast<double>(iters) * 12 * 8 * 2;
}

Contender FmaPeak(int threads) {
  const bool wide = kernels::HostCpuFeatures().avx512f;
  const int64_t iters = 4'000'000;
  Contender c;
  c.flops = static_cast<double>(threads) * static_cast<double>(iters) * (wide ? 24 * 16 : 12 * 8) * 2;
  c.run = [=] {
#pragma omp parallel num_threads(threads)
    {
      if (wide) {
        FmaPeakAvx512(iters);
      } else {
        FmaPeakAvx2(iters);
      }
    }
  };
  return c;
}

struct Inputs {
  std::vector<float> a32, b32;
  std::vector<half_bits> a16, b16;
};

// Values already representable in fp16, so every GEMM sees the same numbers.
Inputs MakeInputs(const Shape& s) {
  Inputs in;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  in.a16.resize(s.m * s.k);
  in.b16.resize(s.k * s.n);
  for (auto& v : in.a16) v = kernels::FloatToHalf(dist(rng));
  for (auto& v : in.b16) v = kernels::FloatToHalf(dist(rng));
  in.a32.resize(in.a16.size());
  in.b32.resize(in.b16.size());
  kernels::HalfToFloatN(in.a16.data(), in.a32.data(), in.a16.size());
  kernels::HalfToFloatN(in.b16.data(), in.b32.data(), in.b16.size());
  return in;
}

double Flops(const Shape& s) { return 2.0 * s.m * s.n * s.k; }

// Our GEMM: fp16 A and B, fp32 accumulation and output, default tile shape.
// Pre-packed: B packed once into the Cube's fractal layout outside the timing,
// as the server packs constant weights at registration (GemmProblem::packed_b).
Contender Npu(const Shape& s, const Inputs& in, bool packed_weights) {
  auto c = std::make_shared<std::vector<float>>(s.m * s.n);
  std::shared_ptr<const kernels::PackedCubeB> packed;
  if (packed_weights) {
    packed = std::make_shared<const kernels::PackedCubeB>(kernels::PackedCubeB::Pack(
        {in.b16.data(), kernels::ElemType::kFloat16, s.n, false}, s.k, s.n, 1, 0, /*saturate=*/false));
  }
  kernels::GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a = in.a16.data();
  p.lda = s.k;
  p.b = in.b16.data();
  p.ldb = s.n;
  p.c = c->data();
  p.ldc = s.n;
  p.packed_b = packed.get();
  return Contender{[p, c, packed] { kernels::CubeGemm(p, kernels::CubeTileShape{}, nullptr); }, Flops(s), {}};
}

#ifdef NPU_BENCH_HAVE_DNNL
// Plain: oneDNN packs inside every call, as we do. Packed: weights reordered into
// oneDNN's preferred layout once, outside the timing.
Contender Onednn(const Shape& s, const Inputs& in, bool packed_weights) {
  using dnnl::memory;
  struct State {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    std::vector<float> c;
    memory a_mem, b_mem, c_mem;
    dnnl::matmul mm;
  };
  auto st = std::make_shared<State>();
  const memory::desc a_md({s.m, s.k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_plain({s.k, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_md = packed_weights ? memory::desc({s.k, s.n}, memory::data_type::f32, memory::format_tag::any)
                                           : b_plain;
  const memory::desc c_md({s.m, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), st->eng);
  st->mm = dnnl::matmul(pd);
  st->c.resize(s.m * s.n);
  st->a_mem = memory(a_md, st->eng, const_cast<float*>(in.a32.data()));
  memory b_user(b_plain, st->eng, const_cast<float*>(in.b32.data()));
  st->c_mem = memory(c_md, st->eng, st->c.data());
  st->b_mem = b_user;
  if (packed_weights && pd.weights_desc() != b_plain) {
    st->b_mem = memory(pd.weights_desc(), st->eng);
    dnnl::reorder(b_user, st->b_mem).execute(st->strm, b_user, st->b_mem);
    st->strm.wait();
  }
  auto run = [st] {
    st->mm.execute(st->strm, {{DNNL_ARG_SRC, st->a_mem}, {DNNL_ARG_WEIGHTS, st->b_mem}, {DNNL_ARG_DST, st->c_mem}});
    st->strm.wait();
  };
  return Contender{run, Flops(s), {}};
}
#endif

#ifdef NPU_BENCH_HAVE_OPENBLAS
Contender Openblas(const Shape& s, const Inputs& in, int threads) {
  auto c = std::make_shared<std::vector<float>>(s.m * s.n);
  const float* a = in.a32.data();
  const float* b = in.b32.data();
  auto run = [=] {
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c->data(), s.n);
  };
  return Contender{run, Flops(s), {}};
}
#endif

std::string Num(double v) {
  if (v < 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Ratio(double a, double b) {
  if (a < 0 || b <= 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", a / b);
  return buf;
}

struct GemmArgs {
  std::vector<std::string> shapes = {"256x256x256", "512x512x512", "1024x1024x1024", "2048x2048x2048",
                                     "512x3072x768"};
  std::vector<int> thread_counts = {1, 2};
  int reps = 7;
};

// "MxNxK" with positive M, N, K, nothing after.
std::optional<Shape> ParseShape(const std::string& text) {
  Shape s{};
  char rest = 0;
  if (std::sscanf(text.c_str(), "%ldx%ldx%ld%c", &s.m, &s.n, &s.k, &rest) != 3 || s.m <= 0 || s.n <= 0 ||
      s.k <= 0) {
    return std::nullopt;
  }
  return s;
}

std::string CheckShape(const std::string& text) {
  return ParseShape(text) ? "" : "bad shape '" + text + "' (want MxNxK, each positive)";
}

int RunGemmBench(const GemmArgs& args) {
  std::vector<Shape> shapes;
  for (const std::string& text : args.shapes) shapes.push_back(*ParseShape(text));  // checked when parsed
  const std::vector<int>& thread_counts = args.thread_counts;
  const int reps = args.reps;
  for (int threads : thread_counts) {
    // oneDNN (OpenMP runtime) sizes its work split from the team size when the
    // primitive is created, so the team is set before anything is built.
    omp_set_num_threads(threads);
    for (const Shape& s : shapes) {
      const Inputs in = MakeInputs(s);
      std::vector<Contender> cs;
      cs.push_back(FmaPeak(threads));
      cs.push_back(Npu(s, in, false));
      cs.push_back(Npu(s, in, true));
      int onednn = -1, onednn_packed = -1, openblas = -1;
#ifdef NPU_BENCH_HAVE_DNNL
      onednn = static_cast<int>(cs.size());
      cs.push_back(Onednn(s, in, false));
      onednn_packed = static_cast<int>(cs.size());
      cs.push_back(Onednn(s, in, true));
#endif
#ifdef NPU_BENCH_HAVE_OPENBLAS
      openblas = static_cast<int>(cs.size());
      cs.push_back(Openblas(s, in, threads));
#endif
      const std::vector<double> g = MedianGflopsRoundRobin(cs, reps);
      auto at = [&](int i) { return i < 0 ? -1.0 : g[i]; };
      const double peak = g[0], npu = g[1], npu_packed = g[2];
      std::printf(
          "{\"bench\":\"gemm\",\"shape\":\"%ldx%ldx%ld\",\"threads\":%d,\"npu_gflops\":%s,"
          "\"npu_packed_gflops\":%s,\"onednn_gflops\":%s,\"onednn_packed_gflops\":%s,\"openblas_gflops\":%s,"
          "\"peak_gflops\":%s,\"ratio_onednn\":%s,\"ratio_packed_onednn_packed\":%s,\"ratio_openblas\":%s,"
          "\"frac_peak\":%s,\"packed_frac_peak\":%s}\n",
          s.m, s.n, s.k, threads, Num(npu).c_str(), Num(npu_packed).c_str(), Num(at(onednn)).c_str(),
          Num(at(onednn_packed)).c_str(), Num(at(openblas)).c_str(), Num(peak).c_str(),
          Ratio(npu, at(onednn)).c_str(), Ratio(npu_packed, at(onednn_packed)).c_str(),
          Ratio(npu, at(openblas)).c_str(), Ratio(npu, peak).c_str(), Ratio(npu_packed, peak).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

std::function<int()> SetupGemmBench(CLI::App& command) {
  auto args = std::make_shared<GemmArgs>();
  command.add_option("--shapes", args->shapes, "GEMM shapes MxNxK, comma-separated")
      ->delimiter(',')
      ->check(CLI::Validator(CheckShape, "MxNxK"))
      ->capture_default_str();
  command.add_option("--threads", args->thread_counts, "host thread counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--reps", args->reps, "timed runs per contender (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  return [args] { return RunGemmBench(*args); };
}

}  // namespace

NPU_BENCH("gemm", "Cube GEMM against oneDNN, OpenBLAS and the FMA peak", SetupGemmBench);

}  // namespace npu::bench
