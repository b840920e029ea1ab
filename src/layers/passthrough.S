/* passthrough.S: the trampolines of a layer's pass-through names, the names
 * the vendor library exports and the headers do not declare. Their
 * prototypes are unknown, so each name is an exported jump through a slot:
 *
 *     name:  jmp *slot[i]          (slot[i] starts at lazy stub i)
 *     lazy i: push i; jmp common
 *     common: save every argument register (rdi rsi rdx rcx r8 r9, rax for
 *             varargs, xmm0-7), ask cgl_pt_resolve(i) (the layer's C file)
 *             for the real function (never NULL), store it in slot[i],
 *             restore the registers and jump there
 *
 * so the real function sees the original call, and later calls take one
 * indirect jump. Slots are 8-byte aligned stores: atomic on x86-64, so
 * threads racing on a first call each resolve and store the same value.
 *
 * One file for every layer, assembled once per layer with
 * -DCGL_PASSTHROUGH_LIST="cg_<api>_passthrough.h", the list callguard-gen
 * writes: `#define CGL_PT_COUNT n` and CGL_PT(index, name) lines, included
 * here three times with three meanings of CGL_PT (include/callguard/layer.h). */
#ifndef CGL_PASSTHROUGH_LIST
#error "assemble with -DCGL_PASSTHROUGH_LIST=\"cg_<api>_passthrough.h\" (callguard_add_layer does)"
#endif
#if !defined(__x86_64__)
#error "pass-through names need x86-64 trampolines: this file has no others"
#endif

#define CGL_PT(i, name)
#include CGL_PASSTHROUGH_LIST

#if CGL_PT_COUNT > 0
        .pushsection .data
        .p2align 3
cgl_pt_slot:
#undef CGL_PT
#define CGL_PT(i, name) .quad cgl_pt_lazy_##i;
#include CGL_PASSTHROUGH_LIST
        .popsection

        .text
#undef CGL_PT
#define CGL_PT(i, name)                                                                                              \
        .p2align 4; .globl name; .type name, @function;                                                              \
name:   jmp *(cgl_pt_slot + 8 * (i))(%rip);                                                                          \
        .size name, . - name;
#include CGL_PASSTHROUGH_LIST

#undef CGL_PT
#define CGL_PT(i, name) cgl_pt_lazy_##i: pushq $(i); jmp cgl_pt_common;
#include CGL_PASSTHROUGH_LIST

/* Entry: rsp points at the index, then the caller's return address. After
 * push rbp and the 184-byte save area the stack is 16-byte aligned for the
 * call. */
        .p2align 4
        .type cgl_pt_common, @function
cgl_pt_common:
        pushq %rbp
        movq %rsp, %rbp
        subq $184, %rsp
        movdqu %xmm0, 0(%rsp)
        movdqu %xmm1, 16(%rsp)
        movdqu %xmm2, 32(%rsp)
        movdqu %xmm3, 48(%rsp)
        movdqu %xmm4, 64(%rsp)
        movdqu %xmm5, 80(%rsp)
        movdqu %xmm6, 96(%rsp)
        movdqu %xmm7, 112(%rsp)
        movq %rdi, 128(%rsp)
        movq %rsi, 136(%rsp)
        movq %rdx, 144(%rsp)
        movq %rcx, 152(%rsp)
        movq %r8, 160(%rsp)
        movq %r9, 168(%rsp)
        movq %rax, 176(%rsp)
        movl 8(%rbp), %edi
        call cgl_pt_resolve
        movl 8(%rbp), %ecx
        leaq cgl_pt_slot(%rip), %rdx
        movq %rax, (%rdx,%rcx,8)
        movq %rax, %r11
        movdqu 0(%rsp), %xmm0
        movdqu 16(%rsp), %xmm1
        movdqu 32(%rsp), %xmm2
        movdqu 48(%rsp), %xmm3
        movdqu 64(%rsp), %xmm4
        movdqu 80(%rsp), %xmm5
        movdqu 96(%rsp), %xmm6
        movdqu 112(%rsp), %xmm7
        movq 128(%rsp), %rdi
        movq 136(%rsp), %rsi
        movq 144(%rsp), %rdx
        movq 152(%rsp), %rcx
        movq 160(%rsp), %r8
        movq 168(%rsp), %r9
        movq 176(%rsp), %rax
        leave
        addq $8, %rsp
        jmp *%r11
        .size cgl_pt_common, . - cgl_pt_common
#endif

/* No executable stack. */
        .section .note.GNU-stack, "", @progbits
