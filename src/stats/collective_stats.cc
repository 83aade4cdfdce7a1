#include "stats/collective_stats.h"

#include <fmt/format.h>

#include <algorithm>

#include "stats/writers.h"

namespace rocesim {

namespace {

double algbw_gbps(const DagJob& j, Time d) {
  return d > Time::zero() ? j.bytes_per_rank * 8.0 / d.sec() / 1e9 : 0;
}

}  // namespace

void write_collectives_csv(std::ostream& out, const DagRunner& runner) {
  out << "job,collective,ranks,iteration,bytes,start_us,finish_us,duration_us,algbw_gbps,busbw_gbps,ideal_us,"
         "slowdown\n";
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const DagJob& job = runner.job(j);
    const auto& iters = runner.iterations(j);
    for (size_t i = 0; i < iters.size(); ++i) {
      const IterationTimes& it = iters[i];
      out << fmt::format("{},{},{},{},{},{},", csv_field(job.name), job.kind, job.ranks, i,
                         job.bytes_per_rank, format_time_us(it.start));
      if (!it.done) {
        out << ",,,,,\n";
        continue;
      }
      const Time d = it.finish - it.start;
      const double alg = algbw_gbps(job, d);
      out << fmt::format("{},{},{:.6f},", format_time_us(it.finish), format_time_us(d), alg);
      if (job.bus_factor > 0) out << fmt::format("{:.6f}", alg * job.bus_factor);
      out << ',';
      if (job.ideal > Time::zero())
        out << fmt::format("{},{:.6f}", format_time_us(job.ideal),
                           static_cast<double>(d.ps) / static_cast<double>(job.ideal.ps));
      else
        out << ',';
      out << '\n';
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

nlohmann::json jobs_json(const DagRunner& runner) {
  nlohmann::json jobs = nlohmann::json::array();
  for (size_t j = 0; j < runner.num_jobs(); ++j) {
    const DagJob& job = runner.job(j);
    const auto& iters = runner.iterations(j);
    size_t done = 0;
    double sum_us = 0, sum_alg = 0, min_us = 0, max_us = 0;
    for (const IterationTimes& it : iters) {
      if (!it.done) continue;
      const Time d = it.finish - it.start;
      min_us = done == 0 ? d.us() : std::min(min_us, d.us());
      max_us = std::max(max_us, d.us());
      sum_us += d.us();
      sum_alg += algbw_gbps(job, d);
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
    if (done > 0) {
      const double mean_us = sum_us / static_cast<double>(done);
      e["iteration_us"] = {{"mean", mean_us}, {"min", min_us}, {"max", max_us}};
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
