# mixed: settle and VaR at once, every layout small, on one rank and two; results
# checked against settle's and var's own in the same file, and shared's VaR holding
# its carrier longer than shared-yield's. The K sweep's figure is made from its files.
set(LD_MIXED_DIR ${CMAKE_CURRENT_LIST_DIR})
foreach(case one ranks bad figure)
  add_test(NAME mixed.${case} COMMAND ${LD_MIXED_DIR}/test_mixed.sh ${case}
    $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mixed
    ${PROJECT_SOURCE_DIR})
  set_tests_properties(mixed.${case} PROPERTIES LABELS mixed TIMEOUT 300
    RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")
endforeach()
