# Run by `cmake --install` (cmake/install.cmake sets LD_SBATCH_SOURCE, LD_SBATCH_DIR and
# LD_BINDIR): settle.sbatch into the install, told the path of the loomdist installed
# with it. The prefix is the one the install runs with; DESTDIR (a package's staging
# folder) is not part of the path the script will run with.
set(bin "${CMAKE_INSTALL_PREFIX}/${LD_BINDIR}/loomdist")
set(dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${LD_SBATCH_DIR}")
file(READ "${LD_SBATCH_SOURCE}" text)
set(unset "readonly INSTALLED_BIN=\"\"")
string(FIND "${text}" "${unset}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${LD_SBATCH_SOURCE} has no line '${unset}' to set")
endif()
string(REPLACE "${unset}" "readonly INSTALLED_BIN=\"${bin}\"" text "${text}")
file(MAKE_DIRECTORY "${dir}")
message(STATUS "Installing: ${dir}/settle.sbatch (its loomdist: ${bin})")
file(WRITE "${dir}/settle.sbatch" "${text}")
file(CHMOD "${dir}/settle.sbatch" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
  GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${dir}/settle.sbatch")
