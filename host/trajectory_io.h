// CSV input and output of single-world rollouts.
//
// Actions CSV: a header naming every actuator exactly once (any order), optionally preceded by a
// `time` column in seconds. Without `time`, row k is the action of control step k; with it, a row
// takes effect at the first control step whose start time is >= its time. After the last row the
// last action is held. Errors name the file, line and column.
//
// Trajectory CSV: `time` then, for every body but the world, `<body>.px .py .pz .qw .qx .qy .qz
// .vx .vy .vz .wx .wy .wz` (origin in m, orientation quaternion, COM velocity m/s, angular
// velocity rad/s, all world frame), then the applied control `<actuator>`. Written to a temporary
// file and renamed on success, so a failed run never leaves a file that looks complete.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/scene/model.h"

namespace s2r {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ActionSchedule {
  bool has_time = false;
  std::vector<double> time;              // s, per row (when has_time)
  std::vector<std::vector<Real>> rows;   // actuator order
  // the action in force at control step `step` starting at time `t`; nullptr = zeros
  const Real* At(long step, double t) const;
};

ActionSchedule ReadActionsCsv(const std::string& path, const Model& m);

// A numeric CSV file: a header row of unique, non-empty column names, then rows of finite numbers
// (blank lines skipped). Errors name the file, line and column: a missing or extra cell, a cell
// that is not a finite number (NaN and inf included), a duplicate column, no rows.
struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  int header_line = 0;
  std::vector<std::vector<double>> rows;  // row-major, header.size() each
  std::vector<int> lines;                 // the file line of each row (1-based)
  int Column(const std::string& name) const;  // -1 when absent
};
// `what` names the file's role in errors ("actions file", "recording").
CsvTable ReadCsvTable(const std::string& path, const std::string& what);

// time, then each body of Model::TrajectoryBodies' pose and velocity, then the controls
std::vector<std::string> TrajectoryColumns(const Model& m);

class CsvWriter {
 public:
  // creates `path`.tmp; Commit() flushes, fsyncs and renames it to `path`
  explicit CsvWriter(const std::string& path);
  ~CsvWriter();
  void WriteHeader(const std::vector<std::string>& columns);
  void WriteRow(const std::vector<double>& values);
  void Commit();

 private:
  std::string path_, tmp_path_;
  FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace s2r
