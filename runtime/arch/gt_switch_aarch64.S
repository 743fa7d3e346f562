/* gt_switch_aarch64.S: the context switch for AArch64, AAPCS64.
 *
 * A switched-out context's stack holds 176 bytes, from its saved stack pointer:
 *   +0   x19 .. x28
 *   +80  x29 (frame pointer), x30 (the address to resume at)
 *   +96  d8 .. d15
 *   +160 FPCR, then padding to keep sp 16-byte aligned
 * These are what the ABI makes callee-saved; everything else a call may clobber.
 */
    .text

/* void *ld_ctx_frame(void *stack_lo, size_t size, ld_ctx_entry entry, void *arg)
 * A first frame that "returns" into ld_ctx_trampoline with arg in x19 and entry in
 * x20. The caller's FPCR is copied in, so the new context inherits it. */
    .globl ld_ctx_frame
    .hidden ld_ctx_frame
    .type ld_ctx_frame, %function
    .p2align 4
ld_ctx_frame:
    .cfi_startproc
    add x9, x0, x1
    and x9, x9, #0xfffffffffffffff0
    sub x0, x9, #176
    stp xzr, xzr, [x0, #16]
    stp xzr, xzr, [x0, #32]
    stp xzr, xzr, [x0, #48]
    stp xzr, xzr, [x0, #64]
    stp xzr, xzr, [x0, #96]
    stp xzr, xzr, [x0, #112]
    stp xzr, xzr, [x0, #128]
    stp xzr, xzr, [x0, #144]
    stp x3, x2, [x0, #0]        /* x19: arg, x20: entry */
    adr x10, ld_ctx_trampoline
    stp xzr, x10, [x0, #80]     /* x29: ends the frame chain, x30: trampoline */
    mrs x10, fpcr
    stp x10, xzr, [x0, #160]
    ret
    .cfi_endproc
    .size ld_ctx_frame, .-ld_ctx_frame

/* Resume the context whose saved stack is now sp's: the second half of every switch. */
.macro LD_CTX_RESTORE
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldr x9, [sp, #160]
    msr fpcr, x9
    add sp, sp, #176
    ret
.endm

/* void ld_ctx_jump(void **save_sp, void *load_sp) */
    .globl ld_ctx_jump
    .hidden ld_ctx_jump
    .type ld_ctx_jump, %function
    .p2align 4
ld_ctx_jump:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x9, sp
    str x9, [x0]
    mov sp, x1                  /* the other context's stack, laid out the same way */
    LD_CTX_RESTORE
    .size ld_ctx_jump, .-ld_ctx_jump

/* void ld_ctx_load(void *load_sp): a jump that saves nothing, for a context that is
 * never resumed. */
    .globl ld_ctx_load
    .hidden ld_ctx_load
    .type ld_ctx_load, %function
    .p2align 4
ld_ctx_load:
    mov sp, x0
    LD_CTX_RESTORE
    .size ld_ctx_load, .-ld_ctx_load

/* The first code of every context: entry(arg) on a 16-byte aligned stack. entry never
 * returns; if it did there is nothing to return to, so trap at once. */
    .type ld_ctx_trampoline, %function
    .p2align 4
ld_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    mov x0, x19
    blr x20
    brk #1
    .cfi_endproc
    .size ld_ctx_trampoline, .-ld_ctx_trampoline

    .section .note.GNU-stack,"",%progbits
