#include "stats/collective_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "stats/writers.h"

namespace rocesim {

namespace {

double algbw_gbps(const DagJob& j, Time d) {
  return d > Time::zero() ? j.bytes_per_rank * 8.0 / d.sec() / 1e9 : 0;
}

// The nearest-rank 99th percentile (v[ceil(0.99 n) - 1] of the sorted values; fct_stats' definition).
double nearest_rank_p99(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t rank = (v.size() * 99 + 99) / 100;  // ceil(0.99 n)
  return v[rank - 1];
}

// Per collective a graph names, the number of distinct hosts its flows run between.
std::vector<int> collective_ranks(const FlowDag& dag) {
  std::vector<std::vector<int>> hosts(dag.collectives());
  for (uint32_t f = 0; f < dag.size(); ++f)
    if (const uint32_t c = dag.collective_of(f); c != FlowDag::kNoCollective) {
      hosts[c].push_back(dag.flow(f).src);
      hosts[c].push_back(dag.flow(f).dst);
    }
  std::vector<int> n;
  for (auto& h : hosts) {
    std::sort(h.begin(), h.end());
    n.push_back(static_cast<int>(std::unique(h.begin(), h.end()) - h.begin()));
  }
  return n;
}

}  // namespace

void write_collectives_csv(std::ostream& out, const DagRunner& runner) {
  out << "job,collective,ranks,iteration,bytes,start_us,finish_us,duration_us,algbw_gbps,busbw_gbps,ideal_us,"
         "slowdown,comm_us,compute_us,exposed_comm_us,trace_id\n";
  // One row: the figures of a job's iteration (`it`), or of one of the collectives its graph names (`it`
  // null; trace_id its id) over [start, finish] when done.
  auto row = [&out](const std::string& job, const std::string& kind, int ranks, size_t iteration, Bytes bytes,
                    double bus_factor, Time ideal, Time start, Time finish, bool done,
                    const IterationTimes* it, const std::string& trace_id) {
    out << fmt::format("{},{},{},{},{},{},", csv_field(job), kind, ranks, iteration, bytes,
                       format_time_us(start));
    if (!done) {
      out << ",,,,,,,,," << csv_field(trace_id) << '\n';
      return;
    }
    const Time d = finish - start;
    const double alg = d > Time::zero() ? bytes * 8.0 / d.sec() / 1e9 : 0;
    out << fmt::format("{},{},{:.6f},", format_time_us(finish), format_time_us(d), alg);
    if (bus_factor > 0) out << fmt::format("{:.6f}", alg * bus_factor);
    out << ',';
    if (ideal > Time::zero())
      out << fmt::format("{},{:.6f}", format_time_us(ideal),
                         static_cast<double>(d.ps) / static_cast<double>(ideal.ps));
    else
      out << ',';
    if (it != nullptr)
      out << fmt::format(",{},{},{}", format_time_us(it->comm), format_time_us(it->compute),
                         format_time_us(it->exposed_comm));
    else
      out << ",,,";
    out << ',' << csv_field(trace_id) << '\n';
  };
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const DagJob& job = runner.job(j);
    const auto& iters = runner.iterations(j);
    const std::vector<int> coll_ranks = collective_ranks(job.dag);
    for (size_t i = 0; i < iters.size(); ++i) {
      const IterationTimes& it = iters[i];
      row(job.name, job.kind, job.ranks, i, job.bytes_per_rank, job.bus_factor, job.ideal, it.start,
          it.finish, it.done, &it, "");
      // The collectives the graph names (a dependency trace's, a training job's collectives and transfers),
      // after the iteration's own row: the begun ones, by start, from their first flow's start to their last
      // flow's finish. What the workload says of one (DagJob::spans) gives its kind, ranks, per-rank bytes,
      // bus factor and ideal; else the job's kind, the hosts its flows run between and all its bytes.
      std::vector<uint32_t> order;
      for (uint32_t c = 0; c < it.collectives.size(); ++c)
        if (it.collectives[c].flows > 0) order.push_back(c);
      std::stable_sort(order.begin(), order.end(), [&it](uint32_t a, uint32_t b) {
        return it.collectives[a].start < it.collectives[b].start;
      });
      for (uint32_t c : order) {
        const StepTimes& ct = it.collectives[c];
        const std::string& id = job.dag.collective_id(c);
        if (c < job.spans.size() && !job.spans[c].kind.empty()) {
          const DagSpan& sp = job.spans[c];
          row(job.name, sp.kind, sp.ranks, i, sp.bytes_per_rank, sp.bus_factor, sp.ideal, ct.start, ct.finish,
              it.done, nullptr, id);
        } else {
          row(job.name, job.kind, coll_ranks[c], i, ct.bytes, 0, Time::zero(), ct.start, ct.finish, it.done,
              nullptr, id);
        }
      }
    }
  }
}

void write_collective_steps_csv(std::ostream& out, const DagRunner& runner) {
  out << "job,iteration,step,flows,bytes,start_us,finish_us\n";
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const std::string name = csv_field(runner.job(j).name);
    const auto& iters = runner.iterations(j);
    for (size_t i = 0; i < iters.size(); ++i)
      for (size_t s = 0; s < iters[i].steps.size(); ++s) {
        const StepTimes& st = iters[i].steps[s];
        if (st.flows == 0) continue;  // not begun
        out << fmt::format("{},{},{},{},{},{},{}\n", name, i, s, st.flows, st.bytes, format_time_us(st.start),
                           st.finish > Time::zero() ? format_time_us(st.finish) : std::string());
      }
  }
}

void write_job_timeline_csv(std::ostream& out, const DagRunner& runner) {
  out << "job,iteration,host,activity,start_us,finish_us\n";
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const DagJob& job = runner.job(j);
    const auto& first = runner.timeline_iteration(j);
    const auto& iters = runner.iterations(j);
    const uint32_t k = job.timeline_iteration;
    if (first.empty() || iters.size() <= k || !iters[k].done) continue;
    // Per host and activity, the intervals of the iteration, merged where they overlap or touch.
    std::map<std::pair<int, int>, std::vector<std::pair<Time, Time>>> spans;  // (host, 0 comm / 1 compute)
    for (uint32_t f = 0; f < first.size(); ++f) {
      const FlowInterval& x = first[f];
      const FlowDag::Flow& d = job.dag.flow(f);
      if (job.dag.is_timer(f)) {  // a training job's compute, on its rank's host
        if (d.dst != FlowDag::kTimer && x.compute_to > x.compute_from)
          spans[{d.dst, 1}].emplace_back(x.compute_from, x.compute_to);
        continue;
      }
      spans[{d.src, 0}].emplace_back(x.start, x.finish);
      spans[{d.dst, 0}].emplace_back(x.start, x.finish);
      if (x.compute_to > x.compute_from) spans[{d.src, 1}].emplace_back(x.compute_from, x.compute_to);
    }
    // The compute between this iteration and the next (compute_us) runs on every host of the job.
    if (job.gap > Time::zero() && k + 1 < job.iterations) {
      std::vector<int> hosts;
      for (const auto& [key, _] : spans) hosts.push_back(key.first);
      hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
      const Time end = iters[k].finish;
      for (int h : hosts) spans[{h, 1}].emplace_back(end, end + job.gap);
    }
    const std::string name = csv_field(job.name);
    for (auto& [key, v] : spans) {
      std::sort(v.begin(), v.end());
      for (size_t i = 0; i < v.size();) {
        Time a = v[i].first, b = v[i].second;
        for (++i; i < v.size() && v[i].first <= b; ++i) b = std::max(b, v[i].second);
        out << fmt::format("{},{},{},{},{},{}\n", name, k, key.first, key.second ? "compute" : "comm",
                           format_time_us(a), format_time_us(b));
      }
    }
  }
}

nlohmann::json jobs_json(const DagRunner& runner) {
  nlohmann::json jobs = nlohmann::json::array();
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const DagJob& job = runner.job(j);
    const auto& iters = runner.iterations(j);
    size_t done = 0;
    double sum_us = 0, sum_alg = 0, min_us = 0, max_us = 0, comm_us = 0, compute_us = 0, exposed_us = 0;
    std::vector<double> durations;
    for (const IterationTimes& it : iters) {
      if (!it.done) continue;
      const Time d = it.finish - it.start;
      min_us = done == 0 ? d.us() : std::min(min_us, d.us());
      max_us = std::max(max_us, d.us());
      sum_us += d.us();
      sum_alg += algbw_gbps(job, d);
      comm_us += it.comm.us();
      compute_us += it.compute.us();
      exposed_us += it.exposed_comm.us();
      durations.push_back(d.us());
      ++done;
    }
    nlohmann::json e = {{"job", job.name},
                        {"collective", job.kind},
                        {"ranks", job.ranks},
                        {"bytes", job.bytes_per_rank},
                        {"flows_per_iteration", job.dag.size()},
                        {"steps", job.dag.steps()},
                        {"iterations", job.iterations},
                        {"iterations_begun", iters.size()},
                        {"iterations_finished", done}};
    if (job.dag.collectives() > 0) e["collectives_per_iteration"] = job.dag.collectives();
    if (done > 0) {
      const double mean_us = sum_us / static_cast<double>(done);
      e["iteration_us"] = {
          {"mean", mean_us}, {"min", min_us}, {"max", max_us}, {"p99", nearest_rank_p99(durations)}};
      const double n = static_cast<double>(done);
      e["comm_us"] = comm_us / n;
      e["compute_us"] = compute_us / n;
      e["exposed_comm_us"] = exposed_us / n;
      e["algbw_gbps"] = sum_alg / static_cast<double>(done);
      if (job.bus_factor > 0) e["busbw_gbps"] = sum_alg / static_cast<double>(done) * job.bus_factor;
      if (job.ideal > Time::zero()) {
        e["ideal_us"] = job.ideal.us();
        e["slowdown"] = mean_us / job.ideal.us();
      }
      e["first_start_us"] = iters.front().start.us();
      for (auto it = iters.rbegin(); it != iters.rend(); ++it)
        if (it->done) {
          e["last_finish_us"] = it->finish.us();
          break;
        }
    }
    jobs.push_back(std::move(e));
  }
  return jobs;
}

}  // namespace rocesim
