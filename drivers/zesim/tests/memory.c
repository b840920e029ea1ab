/* zesim_memory_alloc_and_copy: host/device/shared allocations are tracked, copies and fills through command lists
 * really move bytes, and pointers the simulator did not allocate are refused. */
#include "zesim_test.h"

int main(void)
{
    struct sim s = sim_open();
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    const size_t n = 4096;
    void *host, *dev, *shared;
    OK(zeMemAllocHost(s.context, &hd, n, 64, &host));
    OK(zeMemAllocDevice(s.context, &dd, n, 0, s.device, &dev));
    OK(zeMemAllocShared(s.context, &dd, &hd, n, 256, s.device, &shared));
    CHECK((uintptr_t)shared % 256 == 0);

    ze_memory_allocation_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    ze_device_handle_t owner = NULL;
    OK(zeMemGetAllocProperties(s.context, dev, &mp, &owner));
    CHECK(mp.type == ZE_MEMORY_TYPE_DEVICE && owner == s.device);
    OK(zeMemGetAllocProperties(s.context, host, &mp, NULL));
    CHECK(mp.type == ZE_MEMORY_TYPE_HOST);
    OK(zeMemGetAllocProperties(s.context, (char *)shared + 10, &mp, NULL));
    CHECK(mp.type == ZE_MEMORY_TYPE_SHARED);
    int stack_var = 0;
    OK(zeMemGetAllocProperties(s.context, &stack_var, &mp, NULL));
    CHECK(mp.type == ZE_MEMORY_TYPE_UNKNOWN);

    void *base = NULL;
    size_t size = 0;
    OK(zeMemGetAddressRange(s.context, (char *)dev + 100, &base, &size));
    CHECK(base == dev && size == n);
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemGetAddressRange(s.context, &stack_var, &base, &size));

    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeMemAllocHost(s.context, &hd, 0, 0, &base));
    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, zeMemAllocHost(s.context, &hd, 64, 3, &base));

    /* host -> device -> shared through a synchronous immediate list, then a fill. */
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)host)[i] = (unsigned char)(i * 7);
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
    ze_command_list_handle_t imm;
    OK(zeCommandListCreateImmediate(s.context, s.device, &qd, &imm));
    OK(zeCommandListAppendMemoryCopy(imm, dev, host, n, NULL, 0, NULL));
    OK(zeCommandListAppendMemoryCopy(imm, shared, dev, n, NULL, 0, NULL));
    CHECK(memcmp(shared, host, n) == 0);
    CHECK_ZE(ZE_RESULT_ERROR_OVERLAPPING_REGIONS,
             zeCommandListAppendMemoryCopy(imm, (char *)dev + 1, dev, 16, NULL, 0, NULL));
    const uint32_t pattern = 0xdeadbeef;
    OK(zeCommandListAppendMemoryFill(imm, dev, &pattern, sizeof pattern, n, NULL, 0, NULL));
    CHECK(((uint32_t *)dev)[n / 4 - 1] == 0xdeadbeef);
    OK(zeCommandListDestroy(imm));

    /* Regular list + queue copy. */
    memset(shared, 0, n);
    ze_command_queue_handle_t queue;
    qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    OK(zeCommandQueueCreate(s.context, s.device, &qd, &queue));
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    OK(zeCommandListCreate(s.context, s.device, &ld, &list));
    OK(zeCommandListAppendMemoryCopy(list, shared, host, n, NULL, 0, NULL));
    OK(zeCommandListClose(list));
    OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    CHECK(memcmp(shared, host, n) == 0);
    OK(zeCommandListDestroy(list));
    OK(zeCommandQueueDestroy(queue));

    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(s.context, &stack_var));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(s.context, (char *)host + 1));
    OK(zeMemFree(s.context, host));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(s.context, host)); /* double free */
    OK(zeMemFree(s.context, dev));
    OK(zeMemFree(s.context, shared));
    sim_close(&s);
    puts("ok");
    return 0;
}
