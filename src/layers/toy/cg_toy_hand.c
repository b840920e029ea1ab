/* cg_toy_hand.c: the toy layer's hand-written wrapper (wrapper = hand in
 * apis/toy.ini), #included at the end of the generated cg_toy.c, so it sees
 * the layer's own names (include/callguard/layer.h). Not compiled alone.
 *
 * toyGetProcAddress is a small model of cuGetProcAddress: the real resolver
 * hands out the toy library's own functions, which would bypass the layer.
 * The call itself is guarded like any other (its site, policy and report
 * row); each function it returns is mapped to its export, then to the
 * layer's wrapper of that export. Asked for itself, it returns this
 * wrapper, as the CUDA runtime's first lookup needs. */
CG_EXPORT toy_result_t TOY_APICALL toyGetProcAddress(const char *name, uint32_t version, void **pfn)
{
    toy_result_t r = cgl_guarded_toyGetProcAddress(name, version, pfn);
    if (r == TOY_SUCCESS && pfn) *pfn = cg_wrapper_by_address(&cgl_layer, *pfn);
    return r;
}
