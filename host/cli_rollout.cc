// s2r rollout SCENE --duration T [--actions actions.csv] [--keyframe NAME] --out traj.csv
//              [--contacts contacts.csv]
// Steps one world on the CPU and writes its trajectory at the control rate. The world starts from
// the scene's keyframe "home" (or --keyframe NAME) when it has one; without --actions the controls
// are that keyframe's ctrl, else zero. --contacts also writes the contact points of each control
// step's last physics step (time, geom_a, geom_b, point, normal, separation, normal force: one row
// per point).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "host/cli.h"
#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "host/trajectory_io.h"

namespace s2r {
namespace {

struct RolloutArgs {
  std::string scene;
  double duration = 1.0;
  std::string actions;
  std::string out;
  std::string keyframe;
  std::string contacts;
};

void RunRollout(const RolloutArgs& args) {
  Model model = LoadScene(args.scene);
  if (!args.keyframe.empty()) {
    try {
      model.ApplyKeyframe(args.keyframe);
    } catch (const std::runtime_error& e) {
      throw InputError(std::string("--keyframe: ") + e.what());
    }
  }
  ActionSchedule schedule;
  if (!args.actions.empty()) schedule = ReadActionsCsv(args.actions, model);
  if (!(args.duration > 0) || !std::isfinite(args.duration)) {
    throw InputError("--duration must be a positive number of seconds");
  }
  long steps = std::lround(args.duration * model.control_hz);
  double control_dt = 1.0 / model.control_hz;

  EngineOptions options;
  options.nworld = 1;
  options.threads = 1;
  Engine engine(model, options);
  const Model& m = engine.model();
  const HostState& st = engine.state();

  CsvWriter out(args.out);
  out.WriteHeader(TrajectoryColumns(m));
  std::vector<double> row;
  const std::vector<int> recorded = m.TrajectoryBodies();  // TrajectoryColumns' bodies
  auto emit = [&](double t) {
    row.assign(1, t);
    for (int b : recorded) {
      const StateView& v = st.view;
      for (int k = 0; k < 3; ++k) row.push_back(v.body_pos(0, b)[k]);
      for (int k = 0; k < 4; ++k) row.push_back(v.body_quat(0, b)[k]);
      for (int k = 0; k < 3; ++k) row.push_back(v.body_linvel(0, b)[k]);
      for (int k = 0; k < 3; ++k) row.push_back(v.body_angvel(0, b)[k]);
    }
    for (int a = 0; a < m.nactuator(); ++a) row.push_back(st.view.ctrl(0)[a]);
    out.WriteRow(row);
  };
  emit(0.0);
  std::unique_ptr<CsvWriter> contacts_out;
  if (!args.contacts.empty()) {
    contacts_out = std::make_unique<CsvWriter>(args.contacts);
    contacts_out->WriteHeader({"time", "geom_a", "geom_b", "px", "py", "pz", "nx", "ny", "nz",
                               "separation", "normal_force"});
  }
  auto emit_contacts = [&](double t) {
    for (int i = 0; i < st.contact_count[0]; ++i) {
      const Contact& c = st.view.contacts(0)[i];
      contacts_out->WriteRow({t, double(c.geom_a), double(c.geom_b), c.point.x, c.point.y,
                              c.point.z, c.normal.x, c.normal.y, c.normal.z, c.separation,
                              c.normal_force});
    }
  };
  // without --actions the controls are the keyframe's ctrl (they hold its pose), else zero
  std::vector<Real> zeros(m.nactuator() > 0 ? m.nactuator() : 1, Real(0));
  if (const Model::Keyframe* key = m.FindKeyframe(m.keyframe)) {
    for (size_t a = 0; a < key->ctrl.size(); ++a) zeros[a] = static_cast<Real>(key->ctrl[a]);
  }
  for (long k = 0; k < steps; ++k) {
    const Real* action = schedule.At(k, k * control_dt);
    engine.Step(action ? action : zeros.data());
    if (st.status[0] != kWorldOk) {
      throw std::runtime_error("rollout: world became " +
                               std::string(st.status[0] & kWorldNonFinite ? "non-finite" : "a runaway") +
                               " at t = " + std::to_string((k + 1) * control_dt) + " s; no trajectory written");
    }
    emit((k + 1) * control_dt);
    if (contacts_out) emit_contacts((k + 1) * control_dt);
  }
  out.Commit();
  if (contacts_out) contacts_out->Commit();
  if (st.contact_overflow[0] > 0) {
    std::fprintf(stderr, "s2r rollout: warning: %lld contact points dropped (pool of %d full); raise s2r_max_contacts\n",
                 static_cast<long long>(st.contact_overflow[0]), m.contact_capacity());
  }
}

}  // namespace

void AddRolloutCommand(CLI::App* app) {
  auto args = std::make_shared<RolloutArgs>();
  CLI::App* cmd = app->add_subcommand("rollout", "Step one world and write its trajectory as CSV");
  cmd->add_option("scene", args->scene, "MJCF scene file, or builtin:<name>")->required();
  cmd->add_option("--duration", args->duration, "simulated time, s")->required();
  cmd->add_option("--actions", args->actions, "CSV of actions, one column per actuator (optional time column)");
  cmd->add_option("--out", args->out, "trajectory CSV to write")->required();
  cmd->add_option("--keyframe", args->keyframe,
                  "start from this <keyframe> key (default: the key named 'home', if any); "
                  "without --actions its ctrl is held");
  cmd->add_option("--contacts", args->contacts,
                  "contact CSV to write (each control step's last physics step; geom indices)");
  cmd->callback([args] { RunRollout(*args); });
}

}  // namespace s2r
