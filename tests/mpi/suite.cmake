# mpi: real mpirun with several ranks, checked through the HDF5 files they write.
set(LD_MPI_DIR ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME mpi.ranks COMMAND ${LD_MPI_DIR}/test_ranks.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-ranks)
set_tests_properties(mpi.ranks PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

if(LD_ASAN OR LD_TSAN)
  set(LD_MPI_SANITIZED sanitized)
endif()
add_test(NAME mpi.bad_input COMMAND ${LD_MPI_DIR}/test_bad_input.sh $<TARGET_FILE:loomdist>
  ${CMAKE_CURRENT_BINARY_DIR}/mpi-bad ${LD_MPI_SANITIZED})
set_tests_properties(mpi.bad_input PROPERTIES LABELS "unit;mpi" TIMEOUT 300
  ENVIRONMENT "${LD_MPI_ENV}")

add_test(NAME mpi.strategies COMMAND ${LD_MPI_DIR}/test_strategies.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-strategies)
set_tests_properties(mpi.strategies PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

add_test(NAME mpi.peak_threads COMMAND ${LD_MPI_DIR}/test_peak_threads.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-peak-threads)
set_tests_properties(mpi.peak_threads PROPERTIES LABELS mpi TIMEOUT 180 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

# The same run writes what it wrote before the jobs described themselves.
add_test(NAME mpi.same_as_before COMMAND ${LD_MPI_DIR}/test_same_as_before.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-same-as-before
  ${CMAKE_SOURCE_DIR}/tests/data/before-plugins.h5)
set_tests_properties(mpi.same_as_before PROPERTIES LABELS mpi TIMEOUT 120 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

# Every path of the VaR kernel the CPU runs gives the same VaRs, bit for bit.
add_test(NAME mpi.var_paths COMMAND ${LD_MPI_DIR}/test_var_paths.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-var-paths)
set_tests_properties(mpi.var_paths PROPERTIES LABELS "unit;mpi" TIMEOUT 120
  ENVIRONMENT "${LD_MPI_ENV}")

# A job from a fixture folder, through the contract alone: loomdist-toy is the driver's
# objects with the registry compiled once more, its toy entry on (jobs/registry.c).
add_executable(loomdist-toy ${PROJECT_SOURCE_DIR}/jobs/registry.c
  ${PROJECT_SOURCE_DIR}/tests/fixtures/toy_job/toy.c)
target_compile_definitions(loomdist-toy PRIVATE LD_TOY_JOB)
target_link_libraries(loomdist-toy PRIVATE ld_driver)
add_test(NAME mpi.toy_job COMMAND ${LD_MPI_DIR}/test_toy_job.sh $<TARGET_FILE:loomdist-toy>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/mpi-toy-job ${LD_MPI_SANITIZED})
set_tests_properties(mpi.toy_job PROPERTIES LABELS mpi TIMEOUT 180 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")
