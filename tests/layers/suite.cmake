# layers: the runtime's files depend on one another one way, read from its link graph.
set(LD_LAYERS_DIR ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME unit.layers COMMAND ${LD_LAYERS_DIR}/test_layers.sh ${CMAKE_NM}
  $<TARGET_FILE:ld_runtime>)
set_tests_properties(unit.layers PROPERTIES LABELS unit TIMEOUT 30)

# The check can fail: two files that call each other are a loop, and it says so.
add_library(ld_layers_loop STATIC ${LD_LAYERS_DIR}/loop_a.c ${LD_LAYERS_DIR}/loop_b.c)
add_test(NAME unit.layers_loop_found COMMAND ${LD_LAYERS_DIR}/test_layers.sh ${CMAKE_NM}
  $<TARGET_FILE:ld_layers_loop>)
set_tests_properties(unit.layers_loop_found PROPERTIES LABELS unit TIMEOUT 30
  PASS_REGULAR_EXPRESSION "call one another in a loop:\n  loop_")
