// KForge's torch-lite: the part of the torch::Tensor C++ API that kernel wrappers use, built on PyTorch's
// stable C shim (the aoti_torch_* functions libtorch exports for AOTInductor) instead of torch's C++
// headers, so host code compiles in a fraction of a second instead of 10-40 s (split_build.py).
//
// Every operation calls the same ATen function the full API would (empty_strided, copy_, zero_, ...).
// What is not here fails to compile, and the build then falls back to load_inline as written.
#pragma once

// The standard headers torch's own headers bring in, which wrappers often use without including them
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#ifdef KFORGE_LITE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

extern "C" {
struct AtenTensorOpaque;
typedef AtenTensorOpaque* AtenTensorHandle;
int32_t aoti_torch_device_type_cpu();
int32_t aoti_torch_device_type_cuda();
int32_t aoti_torch_dtype_float16();
int32_t aoti_torch_dtype_bfloat16();
int32_t aoti_torch_dtype_float32();
int32_t aoti_torch_dtype_float64();
int32_t aoti_torch_dtype_uint8();
int32_t aoti_torch_dtype_int8();
int32_t aoti_torch_dtype_int16();
int32_t aoti_torch_dtype_int32();
int32_t aoti_torch_dtype_int64();
int32_t aoti_torch_dtype_bool();
size_t aoti_torch_dtype_element_size(int32_t dtype);
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
int32_t aoti_torch_new_tensor_handle(AtenTensorHandle orig, AtenTensorHandle* ret);
int32_t aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret);
int32_t aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret);
int32_t aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret);
int32_t aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret);
int32_t aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret);
int32_t aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret);
int32_t aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret);
int32_t aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret);
int32_t aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret);
int32_t aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                 int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
int32_t aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking);
int32_t aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret);
int32_t aoti_torch_zero_(AtenTensorHandle self);
#ifdef KFORGE_LITE_CUDA
int32_t aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret);
#endif
}

namespace kforge_lite {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_shim(int32_t err, const char* what) {
  if (err != 0) throw Error(std::string("torch call failed: ") + what);
}

template <typename... A>
std::string cat(const A&... a) {
  std::ostringstream s;
  (void)std::initializer_list<int>{((s << a), 0)...};
  return s.str();
}

// TORCH_CHECK's message: the caller's words, or the condition when there are none
inline std::string check_message(const char* fallback) { return fallback; }
template <typename... A>
std::string check_message(const char*, const A&... a) { return cat(a...); }

enum class ScalarType : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16, Undefined };

inline int32_t shim_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return aoti_torch_dtype_uint8();
    case ScalarType::Char: return aoti_torch_dtype_int8();
    case ScalarType::Short: return aoti_torch_dtype_int16();
    case ScalarType::Int: return aoti_torch_dtype_int32();
    case ScalarType::Long: return aoti_torch_dtype_int64();
    case ScalarType::Half: return aoti_torch_dtype_float16();
    case ScalarType::Float: return aoti_torch_dtype_float32();
    case ScalarType::Double: return aoti_torch_dtype_float64();
    case ScalarType::Bool: return aoti_torch_dtype_bool();
    case ScalarType::BFloat16: return aoti_torch_dtype_bfloat16();
    default: throw Error("unsupported dtype");
  }
}

inline ScalarType from_shim_dtype(int32_t d) {
  for (ScalarType t : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16, ScalarType::Double,
                       ScalarType::Int, ScalarType::Long, ScalarType::Bool, ScalarType::Byte, ScalarType::Char,
                       ScalarType::Short})
    if (shim_dtype(t) == d) return t;
  return ScalarType::Undefined;
}

inline const char* toString(ScalarType t) {
  static const char* names[] = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool",
                                "BFloat16", "Undefined"};
  return names[static_cast<int>(t)];
}
inline std::ostream& operator<<(std::ostream& s, ScalarType t) { return s << toString(t); }

struct alignas(2) Half { uint16_t x; };
struct alignas(2) BFloat16 { uint16_t x; };

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr ScalarType v = ScalarType::Float; };
template <> struct dtype_of<double> { static constexpr ScalarType v = ScalarType::Double; };
template <> struct dtype_of<int32_t> { static constexpr ScalarType v = ScalarType::Int; };
template <> struct dtype_of<int64_t> { static constexpr ScalarType v = ScalarType::Long; };
template <> struct dtype_of<int16_t> { static constexpr ScalarType v = ScalarType::Short; };
template <> struct dtype_of<int8_t> { static constexpr ScalarType v = ScalarType::Char; };
template <> struct dtype_of<uint8_t> { static constexpr ScalarType v = ScalarType::Byte; };
template <> struct dtype_of<bool> { static constexpr ScalarType v = ScalarType::Bool; };
template <> struct dtype_of<Half> { static constexpr ScalarType v = ScalarType::Half; };
template <> struct dtype_of<BFloat16> { static constexpr ScalarType v = ScalarType::BFloat16; };
#ifdef KFORGE_LITE_CUDA_FP16
template <> struct dtype_of<__half> { static constexpr ScalarType v = ScalarType::Half; };
#endif

enum class DeviceType : int8_t { CPU, CUDA };

struct Device {
  DeviceType type_ = DeviceType::CPU;
  int32_t index_ = -1;
  Device(DeviceType t, int32_t i = -1) : type_(t), index_(i) {}
  DeviceType type() const { return type_; }
  int32_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const { return (is_cuda() ? "cuda" : "cpu") + (has_index() ? ":" + std::to_string(index_) : ""); }
};
inline std::ostream& operator<<(std::ostream& s, const Device& d) { return s << d.str(); }

// caffe2::TypeMeta's role: x.dtype() compares with a ScalarType
struct TypeMeta {
  ScalarType t;
  operator ScalarType() const { return t; }
  bool operator==(ScalarType o) const { return t == o; }
  bool operator!=(ScalarType o) const { return t != o; }
  size_t itemsize() const { return aoti_torch_dtype_element_size(shim_dtype(t)); }
  const char* name() const { return toString(t); }
};

// Unset fields take their defaults (float32, CPU) in factories, and the input's in *_like
struct TensorOptions {
  ScalarType dtype_ = ScalarType::Float;
  Device device_ = Device(DeviceType::CPU);
  bool has_dtype_ = false, has_device_ = false;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t), has_dtype_(true) {}
  TensorOptions(Device d) : device_(d), has_device_(true) {}
  TensorOptions(DeviceType d) : device_(Device(d)), has_device_(true) {}
  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; o.has_dtype_ = true; return o; }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; o.has_device_ = true; return o; }
  TensorOptions device(DeviceType t, int32_t i = -1) const { return device(Device(t, i)); }
  ScalarType scalar_type() const { return dtype_; }
  Device get_device() const { return device_; }
  TensorOptions merged_into(const TensorOptions& base) const {
    TensorOptions o = base;
    if (has_dtype_) o = o.dtype(dtype_);
    if (has_device_) o = o.device(device_);
    return o;
  }
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }

// sizes()/strides(): a vector that also reads like c10::IntArrayRef
struct IntArrayRef : std::vector<int64_t> {
  using std::vector<int64_t>::vector;
  IntArrayRef(std::vector<int64_t> v) : std::vector<int64_t>(std::move(v)) {}
  std::vector<int64_t> vec() const { return *this; }
  bool equals(const IntArrayRef& o) const { return *this == o; }
};
inline std::ostream& operator<<(std::ostream& s, const IntArrayRef& a) {
  s << "[";
  for (size_t i = 0; i < a.size(); ++i) s << (i ? ", " : "") << a[i];
  return s << "]";
}

class Tensor {
  AtenTensorHandle h_ = nullptr;

 public:
  Tensor() = default;
  static Tensor steal(AtenTensorHandle h) { Tensor t; t.h_ = h; return t; }  // takes ownership
  Tensor(const Tensor& o) {
    if (o.h_) check_shim(aoti_torch_new_tensor_handle(o.h_, &h_), "new_tensor_handle");
  }
  Tensor(Tensor&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Tensor& operator=(Tensor o) { std::swap(h_, o.h_); return *this; }
  ~Tensor() { if (h_) aoti_torch_delete_tensor_object(h_); }
  AtenTensorHandle release() { AtenTensorHandle h = h_; h_ = nullptr; return h; }
  AtenTensorHandle get() const { return h_; }

  bool defined() const { return h_ != nullptr; }
  int64_t dim() const { int64_t d; check_shim(aoti_torch_get_dim(need(), &d), "dim"); return d; }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { int64_t n; check_shim(aoti_torch_get_numel(need(), &n), "numel"); return n; }
  int64_t wrap(int64_t i) const {
    int64_t d = dim();
    if (i < -d || i >= d) throw Error(cat("Dimension out of range (expected to be in range of [", -d, ", ", d - 1, "], but got ", i, ")"));
    return i < 0 ? i + d : i;
  }
  IntArrayRef sizes() const { int64_t* p; check_shim(aoti_torch_get_sizes(need(), &p), "sizes"); return IntArrayRef(p, p + dim()); }
  IntArrayRef strides() const { int64_t* p; check_shim(aoti_torch_get_strides(need(), &p), "strides"); return IntArrayRef(p, p + dim()); }
  int64_t size(int64_t i) const { return sizes()[wrap(i)]; }
  int64_t stride(int64_t i) const { return strides()[wrap(i)]; }
  ScalarType scalar_type() const { int32_t d; check_shim(aoti_torch_get_dtype(need(), &d), "dtype"); return from_shim_dtype(d); }
  TypeMeta dtype() const { return TypeMeta{scalar_type()}; }
  size_t element_size() const { return dtype().itemsize(); }
  size_t nbytes() const { return element_size() * numel(); }
  Device device() const {
    int32_t t, i;
    check_shim(aoti_torch_get_device_type(need(), &t), "device_type");
    check_shim(aoti_torch_get_device_index(need(), &i), "device_index");
    return Device(t == aoti_torch_device_type_cuda() ? DeviceType::CUDA : DeviceType::CPU, i);
  }
  int32_t get_device() const { return device().index(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_contiguous() const { bool c; check_shim(aoti_torch_is_contiguous(need(), &c), "is_contiguous"); return c; }
  TensorOptions options() const { return TensorOptions().dtype(scalar_type()).device(device()); }
  void* data_ptr() const { void* p; check_shim(aoti_torch_get_data_ptr(need(), &p), "data_ptr"); return p; }
  template <typename T> T* data_ptr() const {
    ScalarType have = scalar_type();
    if (have != dtype_of<T>::v)
      throw Error(cat("expected scalar type ", toString(dtype_of<T>::v), " but found ", toString(have)));
    return static_cast<T*>(data_ptr());
  }
  template <typename T> T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <typename T> const T* const_data_ptr() const { return data_ptr<T>(); }
  const void* const_data_ptr() const { return data_ptr(); }
  void* mutable_data_ptr() const { return data_ptr(); }
  Tensor contiguous() const;
  Tensor clone() const;  // memory_format=preserve, as at::clone
  Tensor& zero_() { check_shim(aoti_torch_zero_(need()), "zero_"); return *this; }
  Tensor& copy_(const Tensor& src, bool non_blocking = false) {
    check_shim(aoti_torch_copy_(need(), src.need(), non_blocking), "copy_");
    return *this;
  }

 private:
  AtenTensorHandle need() const {
    if (!h_) throw Error("undefined tensor");
    return h_;
  }
};

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) { s[i] = acc; acc *= sizes[i] > 1 ? sizes[i] : 1; }
  return s;
}

inline Tensor empty_strided(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, TensorOptions o) {
  AtenTensorHandle h;
  Device d = o.get_device();
  int32_t dt = d.is_cuda() ? aoti_torch_device_type_cuda() : aoti_torch_device_type_cpu();
  int32_t di = d.has_index() ? d.index() : 0;
  check_shim(aoti_torch_empty_strided((int64_t)sizes.size(), sizes.data(), strides.data(), shim_dtype(o.scalar_type()),
                                      dt, di, &h), "empty_strided");
  return Tensor::steal(h);
}
inline Tensor empty(const std::vector<int64_t>& sizes, TensorOptions o = {}) {
  return empty_strided(sizes, contiguous_strides(sizes), o);
}
inline Tensor empty(std::initializer_list<int64_t> sizes, TensorOptions o = {}) { return empty(std::vector<int64_t>(sizes), o); }
inline Tensor zeros(const std::vector<int64_t>& sizes, TensorOptions o = {}) { Tensor t = empty(sizes, o); t.zero_(); return t; }
inline Tensor zeros(std::initializer_list<int64_t> sizes, TensorOptions o = {}) { return zeros(std::vector<int64_t>(sizes), o); }
// one size alone, as torch's IntArrayRef takes it: torch::zeros(n, x.options()), torch::empty(n, x.device())
inline Tensor empty(int64_t n, TensorOptions o = {}) { return empty(std::vector<int64_t>{n}, o); }
inline Tensor zeros(int64_t n, TensorOptions o = {}) { return zeros(std::vector<int64_t>{n}, o); }

// empty_like (memory_format=preserve): the input's strides when it is non-overlapping and dense (contiguous,
// transposed, permuted), else contiguous, as ATen does for the layouts these wrappers see
inline bool non_overlapping_and_dense(const Tensor& t) {
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  std::vector<size_t> order;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return true;
    if (sizes[i] != 1) order.push_back(i);
  }
  for (size_t i = 1; i < order.size(); ++i)  // insertion sort by stride: a handful of dims
    for (size_t j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  int64_t expected = 1;
  for (size_t d : order) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}
inline Tensor empty_like(const Tensor& t, TensorOptions o) {
  o = o.merged_into(t.options());
  IntArrayRef sizes = t.sizes();
  return non_overlapping_and_dense(t) ? empty_strided(sizes, t.strides(), o) : empty(sizes, o);
}
inline Tensor empty_like(const Tensor& t) { return empty_like(t, t.options()); }
inline Tensor zeros_like(const Tensor& t) { Tensor z = empty_like(t); z.zero_(); return z; }
inline Tensor zeros_like(const Tensor& t, TensorOptions o) { Tensor z = empty_like(t, o); z.zero_(); return z; }

inline Tensor Tensor::clone() const {
  AtenTensorHandle h;
  check_shim(aoti_torch_clone(need(), &h), "clone");
  return Tensor::steal(h);
}
inline Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(sizes(), options());
  out.copy_(*this);
  return out;
}

#ifdef KFORGE_LITE_CUDA_CONTEXT  // ATen/cuda/CUDAContext.h, c10/cuda/CUDAStream.h
struct CUDAStream {
  cudaStream_t s;
  operator cudaStream_t() const { return s; }
  cudaStream_t stream() const { return s; }
};
inline CUDAStream getCurrentCUDAStream(int32_t device_index = -1) {
  if (device_index < 0) { int d = 0; cudaGetDevice(&d); device_index = d; }
  void* s;
  check_shim(aoti_torch_get_current_cuda_stream(device_index, &s), "current_cuda_stream");
  return CUDAStream{static_cast<cudaStream_t>(s)};
}
#endif
#ifdef KFORGE_LITE_CUDA_GUARD  // c10/cuda/CUDAGuard.h
inline Device device_of(const Tensor& t) { return t.device(); }
struct CUDAGuard {
  int prev_ = -1;
  explicit CUDAGuard(Device d) { set(d.index()); }
  explicit CUDAGuard(int32_t i) { set(i); }
  void set(int32_t i) {
    cudaGetDevice(&prev_);
    if (i >= 0 && i != prev_) cudaSetDevice(i);
  }
  ~CUDAGuard() { if (prev_ >= 0) cudaSetDevice(prev_); }
};
#endif
#ifdef KFORGE_LITE_CUDA_EXCEPTION  // c10/cuda/CUDAException.h (also through ATen/cuda/CUDAContext.h)
inline void cuda_check(cudaError_t e, const char* file, int line) {
  if (e != cudaSuccess) throw Error(cat("CUDA error: ", cudaGetErrorString(e), " (", file, ":", line, ")"));
}
#endif

}  // namespace kforge_lite

// -- the names kernel wrappers spell -------------------------------------------------------------------------
namespace c10 {
using kforge_lite::BFloat16;
using kforge_lite::Device;
using kforge_lite::DeviceType;
using kforge_lite::Half;
using kforge_lite::IntArrayRef;
using kforge_lite::ScalarType;
using kforge_lite::TensorOptions;
using kforge_lite::toString;
using Error = kforge_lite::Error;
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float, kHalf = ScalarType::Half,
                     kFloat16 = ScalarType::Half, kBFloat16 = ScalarType::BFloat16, kDouble = ScalarType::Double,
                     kFloat64 = ScalarType::Double, kInt = ScalarType::Int, kInt32 = ScalarType::Int,
                     kLong = ScalarType::Long, kInt64 = ScalarType::Long, kBool = ScalarType::Bool,
                     kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte, kChar = ScalarType::Char,
                     kInt8 = ScalarType::Char, kShort = ScalarType::Short, kInt16 = ScalarType::Short;
#ifdef KFORGE_LITE_CUDA
namespace cuda {
#ifdef KFORGE_LITE_CUDA_GUARD
using kforge_lite::CUDAGuard;
using kforge_lite::device_of;
using OptionalCUDAGuard = kforge_lite::CUDAGuard;
#endif
#ifdef KFORGE_LITE_CUDA_CONTEXT
using kforge_lite::CUDAStream;
using kforge_lite::getCurrentCUDAStream;
#endif
}  // namespace cuda
#endif
}  // namespace c10

namespace at {
using namespace c10;
using kforge_lite::empty;
using kforge_lite::empty_like;
using kforge_lite::empty_strided;
using kforge_lite::Tensor;
using kforge_lite::zeros;
using kforge_lite::zeros_like;
#ifdef KFORGE_LITE_CUDA
namespace cuda {
using namespace c10::cuda;
}
#endif
}  // namespace at

namespace torch {
using namespace at;
using kforge_lite::dtype;
}  // namespace torch

#define TORCH_CHECK(cond, ...)                                                                          \
  do {                                                                                                  \
    if (!(cond)) throw ::kforge_lite::Error(::kforge_lite::check_message("Expected " #cond " to be true, but got false.", ##__VA_ARGS__)); \
  } while (0)
#define TORCH_CHECK_VALUE(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ERROR(...) throw ::kforge_lite::Error(::kforge_lite::cat(__VA_ARGS__))
#define TORCH_WARN(...) ((void)0)
#ifdef KFORGE_LITE_CUDA_EXCEPTION
#define C10_CUDA_CHECK(expr) ::kforge_lite::cuda_check((expr), __FILE__, __LINE__)
#define AT_CUDA_CHECK(expr) C10_CUDA_CHECK(expr)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#endif
