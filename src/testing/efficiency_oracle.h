// Runs one of tests/efficiency's Python statements of DeepSpeed's rules with --json and a
// config, and parses its answer (an empty object, with a test failure, when it fails).
// Header-only, tests only.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"

namespace zt::testing {

inline Json efficiency_oracle(const std::string& script, const std::string& config, const std::string& args = "") {
  int rc = 0;
  const std::string out = run_output(python() + " " + oracle_source_dir() + "/tests/efficiency/" + script +
                                         " --json --config '" + config + "' " + args,
                                     &rc);
  EXPECT_EQ(rc, 0) << script << " " << config;
  return rc == 0 ? Json::parse(out) : Json::object();
}

}  // namespace zt::testing
