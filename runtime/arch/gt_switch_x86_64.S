/* gt_switch_x86_64.S: the context switch for x86-64, System V ABI.
 *
 * A switched-out context's stack holds, from its saved stack pointer upwards:
 *   +0  MXCSR (4 bytes), x87 control word (2 bytes), padding
 *   +8  r15, r14, r13, r12, rbx, rbp
 *   +56 the address to resume at
 * These are what the ABI makes callee-saved; everything else a call may clobber.
 * The control words are loaded only when they differ from the ones in force.
 */
    .text

/* Resume the context whose saved stack is now rsp's, given the control words in force
 * in eax (MXCSR) and dx (x87): the second half of every switch. */
.macro LD_CTX_RESTORE
    cmpl (%rsp), %eax           /* loading the control words stalls the pipeline: */
    jne 1f                      /* skip it when they are the ones in force already */
    cmpw 4(%rsp), %dx
    je 2f
1:
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
2:
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %r15
    .cfi_adjust_cfa_offset -8
    popq %r14
    .cfi_adjust_cfa_offset -8
    popq %r13
    .cfi_adjust_cfa_offset -8
    popq %r12
    .cfi_adjust_cfa_offset -8
    popq %rbx
    .cfi_adjust_cfa_offset -8
    popq %rbp
    .cfi_adjust_cfa_offset -8
    ret
.endm

/* Save the running context on its stack and its stack pointer in (rdi): the first
 * half of every switch but the last. */
.macro LD_CTX_SAVE
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    pushq %r12
    .cfi_adjust_cfa_offset 8
    pushq %r13
    .cfi_adjust_cfa_offset 8
    pushq %r14
    .cfi_adjust_cfa_offset 8
    pushq %r15
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
.endm

/* void ld_ctx_jump(void **save_sp, void *load_sp) */
    .globl ld_ctx_jump
    .hidden ld_ctx_jump
    .type ld_ctx_jump, @function
    .p2align 4
ld_ctx_jump:
    .cfi_startproc
    LD_CTX_SAVE
    movl (%rsp), %eax
    movzwl 4(%rsp), %edx
    movq %rsi, %rsp             /* the other context's stack, laid out the same way */
    LD_CTX_RESTORE
    .cfi_endproc
    .size ld_ctx_jump, .-ld_ctx_jump

/* void ld_ctx_load(void *load_sp): a jump that saves nothing, for a context that is
 * never resumed. The control words in force are read through the red zone. */
    .globl ld_ctx_load
    .hidden ld_ctx_load
    .type ld_ctx_load, @function
    .p2align 4
ld_ctx_load:
    .cfi_startproc
    stmxcsr -8(%rsp)
    fnstcw -4(%rsp)
    movl -8(%rsp), %eax
    movzwl -4(%rsp), %edx
    movq %rdi, %rsp
    .cfi_adjust_cfa_offset 56   /* the saved registers and control words, as in a jump */
    LD_CTX_RESTORE
    .cfi_endproc
    .size ld_ctx_load, .-ld_ctx_load

/* void ld_ctx_start(void **save_sp, const ld_ctx *to, ld_ctx_entry entry, void *arg)
 * entry(arg) is called with the stack at to's top, so that it starts as calls do,
 * 16-byte aligned but for its return address, and no bytes of alignment lie above its
 * frame for copy mode to move at every switch. Its control words, to's at 8 (MXCSR)
 * and 12 (x87), are loaded only when they differ from the ones in force. rbp is
 * cleared to end the frame-pointer chain. entry never returns; if it did there is
 * nothing to return to, so trap at once. */
    .globl ld_ctx_start
    .hidden ld_ctx_start
    .type ld_ctx_start, @function
    .p2align 4
ld_ctx_start:
    .cfi_startproc
    LD_CTX_SAVE
    movl 8(%rsi), %eax
    cmpl (%rsp), %eax
    jne 1f
    movzwl 12(%rsi), %eax
    cmpw 4(%rsp), %ax
    je 2f
1:
    ldmxcsr 8(%rsi)
    fldcw 12(%rsi)
2:
    movq (%rsi), %rsp
    .cfi_undefined rip
    xorl %ebp, %ebp
    movq %rcx, %rdi
    call *%rdx
    ud2
    .cfi_endproc
    .size ld_ctx_start, .-ld_ctx_start

    .section .note.GNU-stack,"",%progbits
