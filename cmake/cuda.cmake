# The CUDA backend (src/kernels/cuda/, src/backend/cuda/), built when a CUDA toolkit is
# found: ZT_CUDA=auto (the default) builds it when nvcc is there, on requires it, off
# leaves it out (the build is then the CPU-only one). Device code is compiled for sm_80
# and sm_90, with compute_90 PTX for newer GPUs, with no FMA contraction (--fmad=false)
# and no fast math: the elementwise kernels are bit-identical to the CPU's.
# zt_add_cuda_tests() adds zt_cuda_tests (src/**/cuda/*_test.cc, ctest label `cuda`);
# on a machine without a GPU they skip, naming why, except the tests of the CPU emulation
# (src/kernels/cuda/emulation/), which run the kernels' source on the CPU.
set(ZT_CUDA auto CACHE STRING "Build the CUDA backend: auto (when a toolkit is found), on, off")
set_property(CACHE ZT_CUDA PROPERTY STRINGS auto on off)
set(ZT_HAVE_CUDA OFF)

if(NOT ZT_CUDA STREQUAL "off")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(ZT_HAVE_CUDA ON)
  elseif(ZT_CUDA STREQUAL "on")
    message(FATAL_ERROR "ZT_CUDA=on but no CUDA compiler was found (set CUDACXX or CMAKE_CUDA_COMPILER)")
  endif()
endif()

if(ZT_HAVE_CUDA)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "zerotrain: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  file(GLOB_RECURSE ZT_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*/cuda/*.cu
       ${PROJECT_SOURCE_DIR}/src/*/cuda/*.cc)
  list(FILTER ZT_CUDA_SOURCES EXCLUDE REGEX "_test\\.cc$")
  list(FILTER ZT_CUDA_SOURCES EXCLUDE REGEX "/emulation/")  # the CPU emulation: zt_cuda_tests only
  target_sources(zerotrain PRIVATE ${ZT_CUDA_SOURCES})
  # The runtime is linked statically; cuBLASLt, cuDNN and NCCL are loaded when a CUDA
  # backend is made (kernels/cuda/cublaslt_api.h says why).
  target_link_libraries(zerotrain PUBLIC CUDA::cudart_static ${CMAKE_DL_LIBS})
  target_compile_definitions(zerotrain PUBLIC ZT_HAVE_CUDA=1)
  # The library target exists before CUDA is enabled, so its CUDA properties are set here.
  # CMake 3.25 knows no C++20 flag for nvcc 13: the device code is C++17.
  set_target_properties(zerotrain PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CUDA_STANDARD 17
                        CUDA_EXTENSIONS OFF)
  target_compile_options(zerotrain PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--fmad=false;-Xcompiler=-ffp-contract=off>")
else()
  message(STATUS "zerotrain: CUDA backend off (ZT_CUDA=${ZT_CUDA})")
endif()

# The CUDA benchmarks (bench/cuda/*.cc), one executable each.
if(ZT_HAVE_CUDA AND ZT_BUILD_BENCH)
  file(GLOB ZT_CUDA_BENCH_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/bench/cuda/*.cc)
  foreach(src ${ZT_CUDA_BENCH_SOURCES})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE zerotrain)
  endforeach()
endif()

function(zt_add_cuda_tests)
  if(NOT ZT_HAVE_CUDA)
    return()
  endif()
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*/cuda/*_test.cc)
  # The kernels built for the CPU emulation (src/kernels/cuda/emulation/), whose tests run
  # on every machine with the toolkit, GPU or not.
  file(GLOB emulation CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/kernels/cuda/emulation/*.cc)
  list(FILTER emulation EXCLUDE REGEX "_test\\.cc$")
  # Kernel source reads 16-bit arrays through 16-byte vector types, as device code does: on
  # the host that needs -fno-strict-aliasing, and GCC's uninitialized-use analysis of it is
  # a false alarm; nvcc's #pragma unroll means nothing to it.
  set_source_files_properties(${emulation} PROPERTIES COMPILE_OPTIONS "-fno-strict-aliasing;-Wno-maybe-uninitialized;-Wno-unknown-pragmas")
  add_executable(zt_cuda_tests ${tests} ${emulation})
  target_link_libraries(zt_cuda_tests PRIVATE zerotrain GTest::gtest GTest::gtest_main)
  gtest_discover_tests(zt_cuda_tests
    PROPERTIES LABELS cuda ENVIRONMENT "OMP_NUM_THREADS=2"
    DISCOVERY_TIMEOUT 60)
endfunction()
