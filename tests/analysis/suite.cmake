# analysis: the Python report. analysis.report runs loomdist at 1, 2 and 4 ranks and
# checks the report against the HDF5 files; analysis.stats, analysis.inputs and
# analysis.schema need no binary: the statistics on known values, bad or mixed inputs,
# and the schema's newer parts (UTF-8 strings, the experiment key, units, the thread
# column, the figures) on synthetic files.
set(LD_ANALYSIS_TESTS ${CMAKE_SOURCE_DIR}/tests/analysis)
add_test(NAME analysis.report
  COMMAND ${LD_ANALYSIS_TESTS}/test_report.sh $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/analysis-work)
add_test(NAME analysis.stats
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_stats.py)
add_test(NAME analysis.inputs
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_inputs.py
          ${CMAKE_CURRENT_BINARY_DIR}/analysis-inputs)
add_test(NAME analysis.schema
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_schema.py
          ${CMAKE_CURRENT_BINARY_DIR}/analysis-schema)
set_tests_properties(analysis.report analysis.stats analysis.inputs analysis.schema
  PROPERTIES LABELS analysis TIMEOUT 300)
set_tests_properties(analysis.report PROPERTIES RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")

# analysis.verdicts: the study verdict rules on made-up data, one case per verdict, and
# the claims registry's shape; study.committed: each committed page is what --from
# gives on its kept data, and the README's table of studies is the pages'. study.<name>: each seed study end to end through
# analysis/loomdist-study at --smoke; its page's sections, setup rows, results rows and
# verdict rows are checked against the kept data, and --from must rebuild it byte for byte.
add_test(NAME analysis.verdicts
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_verdicts.py)
add_test(NAME study.committed
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR}
          ${LD_ANALYSIS_TESTS}/check_committed_studies.py ${CMAKE_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/study-committed)
set_tests_properties(analysis.verdicts study.committed PROPERTIES LABELS "analysis;study" TIMEOUT 60)
foreach(study settlement pooling models split)
  add_test(NAME study.${study}
    COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/check_study.py
            ${CMAKE_SOURCE_DIR} $<TARGET_FILE_DIR:loomdist> ${CMAKE_CURRENT_BINARY_DIR}/study-${study}
            ${study})
  set_tests_properties(study.${study} PROPERTIES LABELS study TIMEOUT 300 RUN_SERIAL TRUE)
endforeach()
