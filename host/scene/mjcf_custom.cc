#include "host/scene/mjcf_custom.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>

namespace s2r::mjcf {

void ReadCustom(const std::vector<pugi::xml_node>& sections, LoadState* state) {
  const SourceFile& file = state->file;
  Model& m = state->model;
  std::map<std::string, int> custom_ids;  // <numeric> and <text> names seen so far

  // what each s2r_ numeric accepts, and the one-value Model field it sets (nullptr: special)
  struct Param {
    const char* name;
    bool integer;
    double min;
    bool min_inclusive;
    double max;  // inclusive
    std::vector<Real> Model::*field;
  };
  constexpr double kBig = HUGE_VAL;
  static const Param kParams[] = {
      {"s2r_substeps", true, 1, true, 1e9, nullptr},
      {"s2r_control_hz", false, 0, false, kBig, nullptr},
      {"s2r_max_contacts", true, 1, true, 1e9, nullptr},
      {"s2r_max_latency_steps", true, 0, true, 1e6, nullptr},
      {"s2r_latency_steps", true, 0, true, 1e6, nullptr},
      {"s2r_restitution", false, 0, true, 1, nullptr},
      {"s2r_reduce_slide_trees", true, 0, true, 1, nullptr},
      {"s2r_contact_hertz", false, 0, false, kBig, &Model::contact_hertz},
      {"s2r_contact_damping_ratio", false, 0, false, kBig, &Model::contact_damping_ratio},
      {"s2r_joint_hertz", false, 0, false, kBig, &Model::joint_hertz},
      {"s2r_joint_damping_ratio", false, 0, false, kBig, &Model::joint_damping_ratio},
      {"s2r_contact_push_velocity", false, 0, false, kBig, &Model::contact_push_velocity},
      {"s2r_restitution_threshold", false, 0, true, kBig, &Model::restitution_threshold},
      {"s2r_linear_slop", false, 0, true, kBig, &Model::linear_slop},
      {"s2r_speculative_distance", false, 0, false, kBig, &Model::speculative_distance},
      {"s2r_max_linear_speed", false, 0, false, kBig, &Model::max_linear_speed},
  };
  const std::string kRestitutionPrefix = "s2r_restitution:";

  pugi::xml_node latency_node, max_latency_node;
  double latency = -1;
  std::vector<std::pair<int, double>> restitution_overrides;
  pugi::xml_node restitution_node;
  double restitution_all = -1;
  std::vector<pugi::xml_node> entries;
  for (pugi::xml_node section : sections) {
    CheckAttributes(file, section, false);
    CheckNoText(file, section);
    for (pugi::xml_node c : section.children()) {
      if (c.type() == pugi::node_element) entries.push_back(c);
    }
  }
  for (pugi::xml_node c : entries) {
    std::string tag = c.name();
    if (tag != "numeric" && tag != "text") {
      file.Fail(c, "element not allowed inside <custom> (the s2r subset has numeric and text)");
    }
    CheckAttributes(file, c, false);
    CheckNoText(file, c);
    if (c.first_child()) file.Fail(c.first_child(), "unexpected child element");
    if (!c.attribute("name") || std::string(c.attribute("name").value()).empty()) {
      file.Fail(c, "missing required attribute 'name'");
    }
    std::string name = c.attribute("name").value();
    if (!custom_ids.emplace(name, 0).second) file.Fail(c, "duplicate custom name " + Quote(name));
    const bool ours = name.compare(0, 4, "s2r_") == 0;
    if (tag == "text") {
      if (ours) {
        file.Fail(c, "names starting with 's2r_' are reserved for s2r <numeric> parameters");
      }
      continue;
    }
    std::vector<double> data;
    for (const std::string& w : SplitWords(c.attribute("data").value())) {
      double v;
      if (!ParseReal(w, &v)) {
        file.Fail(c, "attribute 'data': " + Quote(w) + " is not a finite number");
      }
      data.push_back(v);
    }
    if (!ours) continue;  // user data: accepted and ignored
    if (c.attribute("size") && std::string(Word(c, "size")) != "1") {
      file.Fail(c, "an s2r parameter holds one number; attribute 'size' must be 1");
    }
    if (data.size() != 1) {
      file.Fail(c, "attribute 'data' must hold exactly one number for s2r parameter " +
                       Quote(name) + ", got " + std::to_string(data.size()));
    }
    double v = data[0];
    if (name.compare(0, kRestitutionPrefix.size(), kRestitutionPrefix) == 0) {
      std::string geom = name.substr(kRestitutionPrefix.size());
      auto it = state->geom_ids.find(geom);
      if (geom.empty() || it == state->geom_ids.end()) {
        file.Fail(c, "s2r_restitution override names unknown geom " + Quote(geom));
      }
      if (!(v >= 0 && v <= 1)) file.Fail(c, "restitution must be in [0, 1], got " + Num(v));
      restitution_overrides.emplace_back(it->second, v);
      continue;
    }
    const Param* p = nullptr;
    for (const Param& q : kParams) {
      if (name == q.name) p = &q;
    }
    if (p == nullptr) {
      file.Fail(c, "unknown s2r parameter " + Quote(name) +
                       " (names starting with 's2r_' are reserved; see docs/mjcf_subset.md)");
    }
    bool ok = (p->min_inclusive ? v >= p->min : v > p->min) && v <= p->max;
    if (p->integer && v != std::floor(v)) ok = false;
    if (!ok) {
      std::string want = std::string(p->integer ? "an integer " : "a number ") +
                         (p->min_inclusive ? ">= " : "> ") + Num(p->min) +
                         (p->max < 1e6 ? " and <= " + Num(p->max) : "");
      file.Fail(c, "s2r parameter " + Quote(name) + " must be " + want + ", got " + Num(v));
    }
    if (p->field != nullptr) {
      (m.*(p->field)) = {static_cast<Real>(v)};
    } else if (name == "s2r_substeps") {
      m.substeps = static_cast<int>(v);
    } else if (name == "s2r_control_hz") {
      m.control_hz = static_cast<Real>(v);
    } else if (name == "s2r_max_contacts") {
      m.max_contacts = static_cast<int>(v);
    } else if (name == "s2r_max_latency_steps") {
      m.latency_capacity = static_cast<int>(v) + 1;
      max_latency_node = c;
    } else if (name == "s2r_latency_steps") {
      latency = v;
      latency_node = c;
    } else if (name == "s2r_reduce_slide_trees") {
      m.reduce_slide_trees = v != 0;
    } else if (name == "s2r_restitution") {
      restitution_all = v;
      restitution_node = c;
    }
  }
  if (latency_node) {
    if (latency > m.latency_capacity - 1) {
      file.Fail(latency_node, "s2r_latency_steps " + Num(latency) +
                                  " exceeds s2r_max_latency_steps " +
                                  std::to_string(m.latency_capacity - 1) +
                                  (max_latency_node ? "" : " (default 0)"));
    }
    m.latency_steps = {static_cast<int32_t>(latency)};
  }
  if (restitution_node) {
    for (Real& e : m.geom_restitution) e = static_cast<Real>(restitution_all);
  }
  for (const auto& [g, e] : restitution_overrides) m.geom_restitution[g] = static_cast<Real>(e);
}

}  // namespace s2r::mjcf
