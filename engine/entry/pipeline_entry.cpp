#include "entry/pipeline_entry.h"

namespace evalgraph {

std::vector<std::string> load_plugins(PluginRegistry &reg, const std::vector<std::string> &dirs) {
  for (const auto &d : plugin_search_path(dirs)) reg.load_directory(d);
  return reg.errors();
}

Plan plan_pipeline(const Pipeline &p, const PluginRegistry &reg) { return build_plan(p, reg, read_dataset_columns(p)); }

PlannedPipeline plan_pipeline_file(const std::string &file, const PluginRegistry &reg) {
  PlannedPipeline l{load_pipeline(file), {}};
  l.plan = plan_pipeline(l.pipeline, reg);
  return l;
}

}  // namespace evalgraph
