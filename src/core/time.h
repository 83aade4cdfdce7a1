// Simulated time and link rates with their units in the type.
#pragma once
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace rocesim {

using Bytes = int64_t;  // sizes are always bytes

// Simulated time: a strong type over int64 picoseconds.
struct Time {
  int64_t ps = 0;

  static constexpr Time from_ps(int64_t v) { return Time{v}; }
  static constexpr Time from_ns(double v) {
    return Time{static_cast<int64_t>(v * 1e3 + (v >= 0 ? 0.5 : -0.5))};
  }
  static constexpr Time from_us(double v) {
    return Time{static_cast<int64_t>(v * 1e6 + (v >= 0 ? 0.5 : -0.5))};
  }
  static constexpr Time from_ms(double v) {
    return Time{static_cast<int64_t>(v * 1e9 + (v >= 0 ? 0.5 : -0.5))};
  }
  static constexpr Time from_s(double v) {
    return Time{static_cast<int64_t>(v * 1e12 + (v >= 0 ? 0.5 : -0.5))};
  }
  static constexpr Time max() { return Time{std::numeric_limits<int64_t>::max()}; }
  static constexpr Time zero() { return Time{0}; }

  constexpr double ns() const { return static_cast<double>(ps) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(ps) * 1e-9; }
  constexpr double sec() const { return static_cast<double>(ps) * 1e-12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time{ps + o.ps}; }
  constexpr Time operator-(Time o) const { return Time{ps - o.ps}; }
  constexpr Time& operator+=(Time o) {
    ps += o.ps;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps -= o.ps;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time{ps * k}; }
  constexpr Time operator/(int64_t k) const { return Time{ps / k}; }
};

// A link or sending rate in bits per second.
struct Rate {
  double bps = 0;

  static constexpr Rate from_bps(double v) { return Rate{v}; }
  static constexpr Rate from_mbps(double v) { return Rate{v * 1e6}; }
  static constexpr Rate from_gbps(double v) { return Rate{v * 1e9}; }
  constexpr double gbps() const { return bps * 1e-9; }
  constexpr double mbps() const { return bps * 1e-6; }

  constexpr auto operator<=>(const Rate&) const = default;
  constexpr Rate operator+(Rate o) const { return Rate{bps + o.bps}; }
  constexpr Rate operator-(Rate o) const { return Rate{bps - o.bps}; }
  constexpr Rate operator*(double k) const { return Rate{bps * k}; }
  constexpr Rate operator/(double k) const { return Rate{bps / k}; }
  constexpr double operator/(Rate o) const { return bps / o.bps; }
};

// Time to put `size_bytes` on a wire of rate `r`, rounded up to whole picoseconds.
inline Time tx_time(Bytes size_bytes, Rate r) {
  // exact for integral bit rates: ceil(bits * 1e12 / bps). The nearest integer, then up if below: the
  // same as truncating and then going up, without switching the x87 unit to truncation and back.
  const long double ps =
      static_cast<long double>(size_bytes) * 8.0L * 1e12L / static_cast<long double>(r.bps);
  int64_t v = std::llrint(ps);
  if (static_cast<long double>(v) < ps) ++v;
  return Time{v};
}

// Bytes a rate carries during `t` (floor).
inline Bytes bytes_in(Rate r, Time t) {
  return static_cast<Bytes>(static_cast<long double>(r.bps) * static_cast<long double>(t.ps) / 8e12L);
}

}  // namespace rocesim
