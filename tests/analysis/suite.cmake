# analysis: the Python report. analysis.report runs loomdist at 1, 2 and 4 ranks and
# checks the report against the HDF5 files; analysis.stats and analysis.inputs need no
# binary: the statistics on known values, and bad or mixed inputs on synthetic files.
set(LD_ANALYSIS_TESTS ${CMAKE_SOURCE_DIR}/tests/analysis)
add_test(NAME analysis.report
  COMMAND ${LD_ANALYSIS_TESTS}/test_report.sh $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/analysis-work)
add_test(NAME analysis.stats
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_stats.py)
add_test(NAME analysis.inputs
  COMMAND ${LD_ANALYSIS_TESTS}/run_python.sh ${CMAKE_SOURCE_DIR} ${LD_ANALYSIS_TESTS}/test_inputs.py
          ${CMAKE_CURRENT_BINARY_DIR}/analysis-inputs)
set_tests_properties(analysis.report analysis.stats analysis.inputs
  PROPERTIES LABELS analysis TIMEOUT 300)
set_tests_properties(analysis.report PROPERTIES RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")
