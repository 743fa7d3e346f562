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

/* void *ld_ctx_frame(void *stack_lo, size_t size, ld_ctx_entry entry, void *arg)
 * A first frame that "returns" into ld_ctx_trampoline with entry in r13 and arg in
 * r12, with the stack pointer at the top then: 64 bytes, one cache line. The caller's
 * control words are copied in, so the new context inherits them. */
    .globl ld_ctx_frame
    .hidden ld_ctx_frame
    .type ld_ctx_frame, @function
    .p2align 4
ld_ctx_frame:
    .cfi_startproc
    leaq (%rdi,%rsi), %rax
    andq $-16, %rax
    subq $64, %rax              /* after the frame pops, rsp is at the 16-aligned top */
    stmxcsr (%rax)
    fnstcw 4(%rax)
    movq $0, 8(%rax)            /* r15 */
    movq $0, 16(%rax)           /* r14 */
    movq %rdx, 24(%rax)         /* r13: entry */
    movq %rcx, 32(%rax)         /* r12: arg */
    movq $0, 40(%rax)           /* rbx */
    movq $0, 48(%rax)           /* rbp: ends the frame-pointer chain */
    leaq ld_ctx_trampoline(%rip), %rdx
    movq %rdx, 56(%rax)
    ret
    .cfi_endproc
    .size ld_ctx_frame, .-ld_ctx_frame

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

/* void ld_ctx_jump(void **save_sp, void *load_sp) */
    .globl ld_ctx_jump
    .hidden ld_ctx_jump
    .type ld_ctx_jump, @function
    .p2align 4
ld_ctx_jump:
    .cfi_startproc
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

/* The first code of every context: entry(arg), called with the stack at the top, so
 * that entry starts as calls do, 16-byte aligned but for its return address, and no
 * bytes of alignment lie above its frame for copy mode to move at every switch. entry
 * never returns; if it did there is nothing to return to, so trap at once. */
    .type ld_ctx_trampoline, @function
    .p2align 4
ld_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    call *%r13
    ud2
    .cfi_endproc
    .size ld_ctx_trampoline, .-ld_ctx_trampoline

    .section .note.GNU-stack,"",%progbits
