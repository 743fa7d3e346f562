# models: the four-model job end to end, its limits and profiles checked in the file;
# loomdist-forks around it, its JMH JSON checked against the forks' files, and the
# study's figure made from that JSON.
set(LD_MODELS_DIR ${CMAKE_CURRENT_LIST_DIR})
foreach(case low clamped capped nocgroup v2 killed)
  add_test(NAME models.${case} COMMAND ${LD_MODELS_DIR}/test_models.sh ${case}
    $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/models)
  set_tests_properties(models.${case} PROPERTIES LABELS models TIMEOUT 300 SKIP_RETURN_CODE 77
    RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")
endforeach()
foreach(case forks study bad figure)
  add_test(NAME models.forks_${case} COMMAND ${LD_MODELS_DIR}/test_forks.sh ${case}
    $<TARGET_FILE:loomdist-forks> $<TARGET_FILE:loomdist> ${LD_PYTHON}
    ${CMAKE_CURRENT_BINARY_DIR}/forks)
  set_tests_properties(models.forks_${case} PROPERTIES LABELS models TIMEOUT 300
    RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")
endforeach()
