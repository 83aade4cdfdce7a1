// The event queues pop in key order whatever the pattern of pushes: the calendar's buckets, its ring's
// wrap-around, crowded buckets, far events and events earlier than the current bucket all end in the same
// sequence as a sorted reference.
#include "core/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/rng.h"
#include "core/simulator.h"

namespace rocesim {
namespace {

// Runs `steps` random operations on Queue and on a sorted reference; each pop must return the reference's
// smallest key. Delays are drawn from `delay`, measured from the last popped time (as a simulation
// schedules from its clock); `past` of them (in 1,000) are earlier than that clock.
struct Seen {
  int narrowest = 99, widest = -1;  // bucket widths (log2 ps)
  size_t most_in_bucket = 0;        // events in the current bucket
};

// Returns what the calendar went through during the run, for EventQueue.
template <class Queue, class Delay>
Seen check_against_reference(uint64_t seed, int steps, int past_per_mille, Delay delay) {
  Queue q;
  Seen shifts;
  std::set<unsigned __int128> ref;
  Rng rng(seed);
  uint64_t seq = 0;
  int64_t now = 0;
  for (int i = 0; i < steps; ++i) {
    const bool push = ref.empty() || rng.below(100) < 52;
    if (push) {
      int64_t t = now + delay(rng);
      if (static_cast<int>(rng.below(1000)) < past_per_mille) t = std::max<int64_t>(0, now - delay(rng));
      const Event e{Simulator::make_key(Time{t}, static_cast<uint32_t>(rng.below(64)), seq++), 7, 1, seq};
      q.push(e);
      ref.insert(e.key);
    } else {
      EXPECT_FALSE(q.empty());
      EXPECT_EQ(q.top().key, *ref.begin()) << "step " << i;
      const Event e = q.pop();
      EXPECT_EQ(e.key, *ref.begin()) << "step " << i;
      if (e.key != *ref.begin()) return shifts;
      ref.erase(ref.begin());
      now = std::max(now, e.t_ps());
    }
    EXPECT_EQ(q.size(), ref.size());
    if constexpr (requires { q.bucket_shift(); }) {
      shifts.narrowest = std::min(shifts.narrowest, q.bucket_shift());
      shifts.widest = std::max(shifts.widest, q.bucket_shift());
      shifts.most_in_bucket = std::max(shifts.most_in_bucket, q.current_bucket_events());
    }
  }
  while (!ref.empty()) {
    EXPECT_EQ(q.pop().key, *ref.begin());
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(q.empty());
  return shifts;
}

int64_t packet_like(Rng& rng) {  // one serialisation to one link delay, now and then a timer
  if (rng.below(50) == 0) return 50'000'000 + static_cast<int64_t>(rng.below(1'000'000));
  return 80'000 + static_cast<int64_t>(rng.below(1'000'000));
}
int64_t crowded(Rng& rng) {  // everything within 3 ns: thousands of events per bucket
  return static_cast<int64_t>(rng.below(3000));
}
int64_t same_time(Rng& rng) {  // at the clock's picosecond or the next: the current bucket only grows
  return static_cast<int64_t>(rng.below(2));
}
int64_t within_bucket(Rng& rng) {  // mostly inside the current bucket: insertions among its sorted events
  return static_cast<int64_t>(rng.below(150));
}
int64_t wide(Rng& rng) {  // from the same picosecond to far beyond the ring
  return static_cast<int64_t>(rng.below(uint64_t{1} << (rng.below(34))));
}

// The width changes as the pending events grow from none to thousands; each time, only the current
// bucket's events go back into its heap, not every event up to wherever re-placing began.
TEST(EventQueue, PopsInKeyOrderLikePacketTraffic) {
  const Seen seen = check_against_reference<EventQueue>(1, 400'000, 0, packet_like);
  EXPECT_LT(seen.narrowest, seen.widest);
  EXPECT_LT(seen.most_in_bucket, 200u);
}
// Buckets crowded enough that the calendar narrows them, and sparse enough that it widens them: the
// events pending are placed again each time.
TEST(EventQueue, PopsInKeyOrderWithCrowdedBuckets) {
  EXPECT_LT(check_against_reference<EventQueue>(2, 800'000, 0, crowded).narrowest, 8);
}
// The current bucket is a sorted array of up to 64 events: events pushed into it while it is being popped
// are inserted in order, the array is compacted when its end is reached, and beyond 64 events (thousands at
// one picosecond, which no width splits) they go to a heap until it is drained.
TEST(EventQueue, PopsInKeyOrderWhenTheCurrentBucketGrows) {
  EXPECT_GT(check_against_reference<EventQueue>(8, 200'000, 0, same_time).most_in_bucket, 1000u);
  check_against_reference<EventQueue>(9, 400'000, 0, within_bucket);
  check_against_reference<EventQueue>(10, 200'000, 20, within_bucket);
}
TEST(EventQueue, PopsInKeyOrderOverEveryScale) {
  EXPECT_GT(check_against_reference<EventQueue>(3, 400'000, 0, wide).widest, 8);
}
TEST(EventQueue, PopsInKeyOrderWithEventsInThePast) {
  check_against_reference<EventQueue>(4, 200'000, 20, packet_like);
  check_against_reference<EventQueue>(5, 200'000, 20, wide);
}
TEST(EventHeap, PopsInKeyOrder) {
  check_against_reference<EventHeap>(6, 200'000, 0, packet_like);
  check_against_reference<EventHeap>(7, 200'000, 20, wide);
}

// Emptied, the queue starts again at whatever time comes next, earlier or later than before.
TEST(EventQueue, RestartsAfterDrainingAtAnEarlierOrLaterTime) {
  EventQueue q;
  uint64_t seq = 0;
  for (int64_t t : {int64_t{5'000'000'000}, int64_t{10}, int64_t{900'000'000'000}, int64_t{0}}) {
    for (int i = 0; i < 20; ++i) q.push(Event{Simulator::make_key(Time{t + 300 * i}, 1, seq++), 0, 0, 0});
    int64_t last = -1;
    for (int i = 0; i < 20; ++i) {
      const Event e = q.pop();
      EXPECT_EQ(e.t_ps(), t + 300 * i);
      EXPECT_GT(e.t_ps(), last);
      last = e.t_ps();
    }
    EXPECT_TRUE(q.empty());
  }
}

}  // namespace
}  // namespace rocesim
