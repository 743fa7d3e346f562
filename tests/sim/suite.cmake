# sim: where the wall time goes (every run, no SimGrid needed), and the SMPI skeleton's
# simulation and validation (skipped, with status 77, where SimGrid is absent).
set(LD_SIM_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME sim.phases COMMAND ${LD_SIM_TEST_DIR}/test_phases.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/sim-phases)
set_tests_properties(sim.phases PROPERTIES LABELS "mpi;sim" TIMEOUT 180 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

# A local platform calibrated from real ping-pong runs (no SimGrid needed).
add_test(NAME sim.platform COMMAND ${LD_SIM_TEST_DIR}/test_platform.sh
  $<TARGET_FILE:loomdist-pingpong> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/sim-platform)
set_tests_properties(sim.platform PROPERTIES LABELS "mpi;sim" TIMEOUT 120 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

# The skeleton against real runs at 1 to 4 ranks (skips where SimGrid is absent).
# Labelled timing, as are the other two validations: their bounds are wall times,
# which a sanitizer stretches unevenly (loomdist's code, not Open MPI's or HDF5's).
add_test(NAME sim.validate COMMAND ${LD_SIM_TEST_DIR}/test_validate.sh
  $<TARGET_FILE:loomdist> $<TARGET_FILE:loomdist-pingpong> "${LD_SIM_SKELETON}" ${LD_PYTHON}
  ${CMAKE_CURRENT_BINARY_DIR}/sim-validate)
set_tests_properties(sim.validate PROPERTIES LABELS "sim;timing" TIMEOUT 600 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77 ENVIRONMENT "${LD_MPI_ENV}")

# The same under --partition ranges.
add_test(NAME sim.validate_ranges COMMAND ${LD_SIM_TEST_DIR}/test_validate.sh
  $<TARGET_FILE:loomdist> $<TARGET_FILE:loomdist-pingpong> "${LD_SIM_SKELETON}" ${LD_PYTHON}
  ${CMAKE_CURRENT_BINARY_DIR}/sim-validate-ranges ranges)
set_tests_properties(sim.validate_ranges PROPERTIES LABELS "sim;timing" TIMEOUT 600 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77 ENVIRONMENT "${LD_MPI_ENV}")

# The report's predicted section, labelled and kept apart (skips without SimGrid).
add_test(NAME sim.report COMMAND ${LD_SIM_TEST_DIR}/test_report.sh
  $<TARGET_FILE:loomdist> "${LD_SIM_SKELETON}" ${LD_PYTHON}
  ${CMAKE_CURRENT_BINARY_DIR}/sim-report)
set_tests_properties(sim.report PROPERTIES LABELS "sim;analysis" TIMEOUT 300
  RUN_SERIAL TRUE SKIP_RETURN_CODE 77 ENVIRONMENT "${LD_MPI_ENV}")

# --partition ranges gives block's results bit for bit (no SimGrid needed).
add_test(NAME sim.ranges COMMAND ${LD_SIM_TEST_DIR}/test_ranges.sh $<TARGET_FILE:loomdist>
  ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/sim-ranges)
set_tests_properties(sim.ranges PROPERTIES LABELS "mpi;sim" TIMEOUT 180 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")

# The skeleton against the local Slurm cluster's runs on 1 to 3 nodes (skips where
# SimGrid or Slurm is absent). RUN_SERIAL: it starts daemons and loads every core.
# timeout: its own limit, under CTest's, so that its EXIT trap stops the cluster.
add_test(NAME sim.slurm_validate COMMAND timeout -k 20 500
  ${LD_SIM_TEST_DIR}/test_slurm_validate.sh
  $<TARGET_FILE:loomdist> $<TARGET_FILE:loomdist-pingpong> "${LD_SIM_SKELETON}"
  ${LD_PYTHON}
  ${CMAKE_CURRENT_BINARY_DIR}/sim-slurm-validate)
set_tests_properties(sim.slurm_validate PROPERTIES LABELS "sim;slurm;timing" TIMEOUT 560
  RUN_SERIAL TRUE SKIP_RETURN_CODE 77 ENVIRONMENT "${LD_MPI_ENV}")
