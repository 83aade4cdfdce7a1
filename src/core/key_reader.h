// The typed reading of a scenario's keys, as a scheme needs it. A scheme (src/cc/) reads its [cc.<name>]
// table through this interface, so that cc/ does not depend on config/: config/config.h's Config implements
// it (it checks every value, and records every key read, for scenario.resolved.toml and for the check that
// no key of the file is unknown).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace rocesim {

class KeyReader {
 public:
  virtual ~KeyReader() = default;

  // Keys are dotted paths ("cc.dcqcn.g"). Each getter returns the key's value, or `def` when the key is
  // absent, and records the value used; a value of the wrong type, outside [lo, hi] or not one of `allowed`
  // (when given) is an InputError that names the key.
  virtual bool has(const std::string& key) const = 0;
  virtual int64_t get_int(const std::string& key, int64_t def, int64_t lo, int64_t hi) = 0;
  virtual double get_double(const std::string& key, double def, double lo, double hi) = 0;
  virtual bool get_bool(const std::string& key, bool def) = 0;
  virtual std::string get_string(const std::string& key, const std::string& def,
                                 const std::vector<std::string>& allowed = {}) = 0;
  // A duration given in microseconds (a key named *_us) as a Time; the default and the bounds in
  // microseconds too, or the default as a Time (a settings struct's value; it is recorded as def.us()).
  Time get_us(const std::string& key, double def_us, double lo = 0, double hi = 1e9) {
    return Time::from_us(get_double(key, def_us, lo, hi));
  }
  Time get_us(const std::string& key, Time def, double lo = 0, double hi = 1e9) {
    return Time::from_us(get_double(key, def.us(), lo, hi));
  }
  // Records a value the reader decided without reading it (e.g. a default that differs from the one of
  // the keys it shares with another scheme), so that the resolved scenario shows it.
  virtual void set_resolved_bool(const std::string& key, bool value) = 0;
  // Throws an InputError about `key` (its file and line, or its --set).
  [[noreturn]] virtual void fail(const std::string& key, const std::string& what) const = 0;
};

}  // namespace rocesim
