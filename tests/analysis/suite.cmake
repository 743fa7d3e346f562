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
