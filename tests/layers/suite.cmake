# layers: every target of the build, and the files within each, depend on one another
# one way, read from their symbols (nm) against the order in layers.txt.
set(LD_LAYERS_DIR ${CMAKE_CURRENT_LIST_DIR})

# Every library target under dir and its sub-folders (tests/ aside), as NAME=FILES, and
# every program as program:NAME=FILE.
function(ld_layers_targets dir out)
  set(specs)
  get_property(names DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${names})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND specs "${t}=$<TARGET_FILE:${t}>")
    elseif(type STREQUAL "OBJECT_LIBRARY")
      list(APPEND specs "${t}=$<JOIN:$<TARGET_OBJECTS:${t}>,$<COMMA>>")
    elseif(type STREQUAL "EXECUTABLE")
      list(APPEND specs "program:${t}=$<TARGET_FILE:${t}>")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    if(NOT sub MATCHES "/tests$")
      ld_layers_targets(${sub} more)
      list(APPEND specs ${more})
    endif()
  endforeach()
  set(${out} ${specs} PARENT_SCOPE)
endfunction()
ld_layers_targets(${PROJECT_SOURCE_DIR} LD_LAYERS_SPECS)

add_test(NAME unit.layers COMMAND ${LD_PYTHON} ${LD_LAYERS_DIR}/check_layers.py ${CMAKE_NM}
  ${LD_LAYERS_DIR}/layers.txt ${LD_LAYERS_SPECS})
set_tests_properties(unit.layers PROPERTIES LABELS unit TIMEOUT 60)

# The check can fail: two files that call each other are a loop, and it says so; and a
# target that uses one on its own line or above is named.
add_library(ld_layers_loop STATIC ${LD_LAYERS_DIR}/loop_a.c ${LD_LAYERS_DIR}/loop_b.c)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers-loop.txt "ld_layers_loop\n")
add_test(NAME unit.layers_loop_found COMMAND ${LD_PYTHON} ${LD_LAYERS_DIR}/check_layers.py
  ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/layers-loop.txt
  ld_layers_loop=$<TARGET_FILE:ld_layers_loop>)
set_tests_properties(unit.layers_loop_found PROPERTIES LABELS unit TIMEOUT 30
  PASS_REGULAR_EXPRESSION "call one another in a loop:\n  loop_")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers-upside-down.txt "ld_runtime\nld_sys ld_stats\n")
add_test(NAME unit.layers_order_found COMMAND ${LD_PYTHON} ${LD_LAYERS_DIR}/check_layers.py
  ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/layers-upside-down.txt
  ld_runtime=$<TARGET_FILE:ld_runtime> ld_sys=$<TARGET_FILE:ld_sys>
  ld_stats=$<TARGET_FILE:ld_stats>)
set_tests_properties(unit.layers_order_found PROPERTIES LABELS unit TIMEOUT 30
  PASS_REGULAR_EXPRESSION "ld_runtime uses ld_s[a-z]+ \\([a-z_]+\\), which is not below it")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers-only.txt "ld_runtime\nonly uv_ : ld_http\n")
add_test(NAME unit.layers_only_found COMMAND ${LD_PYTHON} ${LD_LAYERS_DIR}/check_layers.py
  ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/layers-only.txt
  ld_runtime=$<TARGET_FILE:ld_runtime>)
set_tests_properties(unit.layers_only_found PROPERTIES LABELS unit TIMEOUT 30
  PASS_REGULAR_EXPRESSION "ld_runtime calls uv_[a-z_]+, which only ld_http may")
