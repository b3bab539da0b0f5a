# install.cmake - what `cmake --install` puts into a prefix, and the Debian
# package (`cpack -G DEB` in the build directory).
#
#   bin/gpuscope
#   lib/gpuscope/libgpuscope-collect.so   (found by gpuscope as
#                                          BINDIR/../lib/gpuscope, or by the
#                                          install prefix compiled in)
#   lib/gpuscope/libgpuscope-collect-nolock.so  (the same without lock
#                                          wrappers: profile --on-demand)
#   lib/gpuscope/gpuscope_site/           (the Python start-up hook, docs/memory.md:
#                                          profile finds it beside the collector)
#   lib/gpuscope/examples/demo            (the bundled CPU demo)
#   share/man/man1/gpuscope*.1            (generated from the option tables)
#   share/bash-completion/completions/gpuscope, share/zsh/vendor-completions/_gpuscope
#   share/doc/gpuscope/                   (README.md and docs/)
#
# The man pages and the completion are written by `gpuscope __gen DIR`
# after each link of gpuscope, into build/gen (src/cli/CMakeLists.txt).

install(TARGETS gpuscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET gpuscope-collect)
  install(TARGETS gpuscope-collect gpuscope-collect-nolock LIBRARY DESTINATION ${GS_COLLECTOR_INSTALL_DIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/src/collect/python/gpuscope_site
  DESTINATION ${GS_COLLECTOR_INSTALL_DIR} FILES_MATCHING PATTERN "*.py")
if(TARGET demo)
  install(TARGETS demo RUNTIME DESTINATION ${GS_COLLECTOR_INSTALL_DIR}/examples)
endif()
install(DIRECTORY ${GS_GEN_DIR}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES ${GS_GEN_DIR}/completion/gpuscope
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${GS_GEN_DIR}/completion/_gpuscope
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# `cmake --install` and cpack never build: a test runs them while other
# tests run the binaries, which must not be relinked under them.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_PACKAGE_NAME gpuscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU performance profiler: records CPU threads and GPUs, and diagnoses what holds a program back")
set(CPACK_PACKAGE_CONTACT "gpuscope developers")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# the libraries gpuscope links (zstd, zlib, sqlite) found by dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
