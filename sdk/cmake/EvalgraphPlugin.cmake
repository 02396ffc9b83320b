# evalgraph_add_plugin(<name> SOURCES <files...> [LIBRARIES <targets...>] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL]
#                      [VERSION <x.y.z>])
#
# Builds a plugin shared library against the evalgraph SDK: hidden visibility, no undefined symbols, and a
# version script that exports only the entry symbol `evalgraph_plugin_v1`. Works in the evalgraph tree and
# in an out-of-tree project after find_package(evalgraph). The plugin's version (what `evalgraph plugins`
# shows) is VERSION, or else the project's (project(... VERSION x.y.z)); EVALGRAPH_PLUGIN(...) reads it from
# the definition EVALGRAPH_PLUGIN_VERSION.
set(_EVALGRAPH_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "where plugin.version lives")

function(evalgraph_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY;VERSION" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "evalgraph_add_plugin(${name}): SOURCES is required")
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT ARG_VERSION)
    message(FATAL_ERROR "evalgraph_add_plugin(${name}): no version; give the project one "
                        "(project(<name> VERSION 1.0.0 ...)) or pass VERSION 1.0.0")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_compile_definitions(${name} PRIVATE "EVALGRAPH_PLUGIN_VERSION=\"${ARG_VERSION}\"")
  target_link_libraries(${name} PRIVATE evalgraph::sdk ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${name} PRIVATE
      "LINKER:--no-undefined"
      "LINKER:--version-script=${_EVALGRAPH_PLUGIN_CMAKE_DIR}/plugin.version")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED EVALGRAPH_PLUGIN_OUTPUT_DIR)
    # In the evalgraph tree: bundled plugins go next to the engine.
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${EVALGRAPH_PLUGIN_OUTPUT_DIR})
  endif()
  if(DEFINED EVALGRAPH_WARNINGS)
    target_compile_options(${name} PRIVATE ${EVALGRAPH_WARNINGS})
  endif()
  if(DEFINED EVALGRAPH_PLUGIN_INSTALL_DIR AND NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION ${EVALGRAPH_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# evalgraph_plugin_core(<target> <sources>... [LIBRARIES <libs>...])
#
# A plugin's computation as a static library of its own folder (PIC, the folder as its include dir, linked to
# evalgraph::sdk), so that tests link it without the plugin ABI while plugin.cpp keeps the glue:
#   evalgraph_plugin_core(shouting_core shout.cpp)
#   evalgraph_add_plugin(shouting SOURCES plugin.cpp LIBRARIES shouting_core)
function(evalgraph_plugin_core name)
  cmake_parse_arguments(PC "" "" "LIBRARIES" ${ARGN})
  if(NOT PC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "evalgraph_plugin_core(${name}): no sources given")
  endif()
  add_library(${name} STATIC ${PC_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC evalgraph::sdk ${PC_LIBRARIES})
  if(DEFINED EVALGRAPH_WARNINGS)
    target_compile_options(${name} PRIVATE ${EVALGRAPH_WARNINGS})
  endif()
endfunction()
