#include "core/rng.h"

#include <cmath>

namespace rocesim {

double Rng::exponential(double mean) {
  double u = uniform();
  return -mean * std::log1p(-u);
}

}  // namespace rocesim
