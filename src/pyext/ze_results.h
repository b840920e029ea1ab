/* Level Zero's result names, for result_name() and load_binary's errors
 * where no ze layer is loaded in the process (cg_result_name asks the loaded
 * layers; results.c): the ze_result_t enumerators of level_zero/ze_api.h
 * (Debian's 1.8.12); each is compared by the header's own value. */
#define CG_PY_ZE_RESULTS(X)                                                                                            \
    X(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)                                                                          \
    X(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)                                                                       \
    X(ZE_RESULT_ERROR_DEVICE_LOST)                                                                                     \
    X(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)                                                                           \
    X(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)                                                                            \
    X(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)                                                                        \
    X(ZE_RESULT_ERROR_INVALID_ARGUMENT)                                                                                \
    X(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)                                                                       \
    X(ZE_RESULT_ERROR_INVALID_ENUMERATION)                                                                             \
    X(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME)                                                                           \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME)                                                                             \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)                                                                  \
    X(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)                                                                    \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)                                                                   \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)                                                                    \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)                                                                  \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)                                                                             \
    X(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED)                                                                         \
    X(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)                                                                           \
    X(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)                                                                             \
    X(ZE_RESULT_ERROR_INVALID_NULL_POINTER)                                                                            \
    X(ZE_RESULT_ERROR_INVALID_SIZE)                                                                                    \
    X(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)                                                                  \
    X(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)                                                                            \
    X(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)                                                                             \
    X(ZE_RESULT_ERROR_NOT_AVAILABLE)                                                                                   \
    X(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)                                                                            \
    X(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)                                                                              \
    X(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)                                                                             \
    X(ZE_RESULT_ERROR_UNINITIALIZED)                                                                                   \
    X(ZE_RESULT_ERROR_UNKNOWN)                                                                                         \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)                                                                           \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)                                                                         \
    X(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)                                                                             \
    X(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT)                                                                        \
    X(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)                                                                                \
    X(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)                                                                             \
    X(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX)                                                                        \
    X(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE)                                                                               \
    X(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE)                                                                        \
    X(ZE_RESULT_NOT_READY)                                                                                             \
    X(ZE_RESULT_SUCCESS)                                                                                               \
    X(ZE_RESULT_WARNING_ACTION_REQUIRED)                                                                               \
    X(ZE_RESULT_WARNING_DROPPED_DATA)
