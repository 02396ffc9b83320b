#pragma once
// The public door, finished runs: what the commands that read results folders use (compare, agree, the end of a
// run's summary), and where a front end that lays out its own runs finds the run folder's plan.
#include "agree/agreement.h"        // agree::agreement_text: run.json's "agreement" as text
#include "expect/expectations.h"    // announce_expectations: the expect: verdicts, printed
#include "report/default_report.h"  // records_file_of: which file of a results folder holds its records
#include "run_folder/run_folder.h"  // run_folder::: the files of a results folder, and new folders' names
#include "stats/stats.h"            // the statistics compare and agree report (intervals, tests)
