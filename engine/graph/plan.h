#pragma once
// The pipeline resolved against the loaded plugins and the dataset's columns: every node bound to its
// node type, every port bound to a record field, and the DAG (a Boost.Graph) in topological order.
#include <boost/graph/adjacency_list.hpp>
#include <memory>
#include <string>
#include <vector>

#include "agree/labels.h"
#include "config/pipeline.h"
#include "plugin/registry.h"

namespace evalgraph {

struct PortBinding {
  std::string port;   // the name the plugin sees
  std::string field;  // the record field as written ("column", "node.field" or "node")
  std::string top;    // first path element: a dataset column or a node id
  std::string sub;    // second element when `top` is a node id ("" = the node's whole output)
  bool required = false;
};

struct PlannedNode {
  const NodeDecl *decl = nullptr;
  const NodeTypeInfo *type = nullptr;
  std::vector<PortBinding> ports;
  std::vector<size_t> upstream;  // indices into Plan::nodes of direct predecessors
  bool sequence() const { return type->has(EG_FLAG_SEQUENCE); }
};

// Vertices are the pipeline's nodes (declaration order); an edge u→v means v runs after u.
using DagGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

struct Plan {
  std::vector<PlannedNode> nodes;  // in execution (topological) order
  std::vector<PlannedNode> sinks;  // in declaration order, after all nodes
  std::vector<std::string> dataset_columns;
  DagGraph graph;
  std::vector<std::string> edge_reasons;  // parallel to boost edges, for the DOT labels
  std::vector<std::pair<size_t, size_t>> edge_list;  // declaration indices
  std::string group_by, order_by;  // set when a sequence node is present (one grouping per pipeline)
  // What describe() (ABI 1.2) said about each node of a type that has it; PlannedNode::type points here.
  std::vector<std::shared_ptr<const NodeTypeInfo>> described;
  // People's labels (labels:), read and checked with the plan; null when the pipeline declares none.
  std::shared_ptr<agree::LabelSet> labels;
};

// Reads and checks the pipeline's labels (a labels file, or the label fields of the data set's records), or
// `labels_file` in place of the pipeline's path (evalgraph agree --labels). Appends every problem to `diags`.
std::shared_ptr<agree::LabelSet> load_labels(const Pipeline &p, const std::filesystem::path &labels_file,
                                             std::vector<Diagnostic> &diags);
// The same into a set made already (`evalgraph agree` reads it on a thread while the records are gathered).
bool read_labels(agree::LabelSet &set, const Pipeline &p, const std::filesystem::path &labels_file,
                 std::vector<Diagnostic> &diags);

// The dataset's columns: the CSV header, or the keys of the first JSONL records. Throws ConfigError.
std::vector<std::string> read_dataset_columns(const Pipeline &p);

// Checks everything that needs the plugins and the data, and orders the DAG. Throws ConfigError listing
// every problem with file:line:column.
Plan build_plan(const Pipeline &p, const PluginRegistry &registry, const std::vector<std::string> &columns);

// Graphviz DOT of the plan: dataset → nodes → sinks, edges labelled with the fields that flow.
std::string to_dot(const Pipeline &p, const Plan &plan);

}  // namespace evalgraph
