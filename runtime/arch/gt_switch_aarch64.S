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

/* Save the running context on its stack and its stack pointer in [x0]: the first half
 * of every switch but the last. */
.macro LD_CTX_SAVE
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
.endm

/* void ld_ctx_jump(void **save_sp, void *load_sp) */
    .globl ld_ctx_jump
    .hidden ld_ctx_jump
    .type ld_ctx_jump, %function
    .p2align 4
ld_ctx_jump:
    LD_CTX_SAVE
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

/* void ld_ctx_start(void **save_sp, const ld_ctx *to, ld_ctx_entry entry, void *arg)
 * entry(arg) is called with sp at to's top, 16-byte aligned, and to's FPCR (at 8) in
 * force; x29 is cleared to end the frame chain. entry never returns; if it did there
 * is nothing to return to, so trap at once. */
    .globl ld_ctx_start
    .hidden ld_ctx_start
    .type ld_ctx_start, %function
    .p2align 4
ld_ctx_start:
    .cfi_startproc
    LD_CTX_SAVE
    .cfi_adjust_cfa_offset 176
    ldr x9, [x1, #8]
    msr fpcr, x9
    ldr x9, [x1]
    mov sp, x9
    .cfi_undefined x30
    mov x29, xzr
    mov x0, x3
    blr x2
    brk #1
    .cfi_endproc
    .size ld_ctx_start, .-ld_ctx_start

    .section .note.GNU-stack,"",%progbits
