// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sym.c - kernel symbols that are not exported to us, resolved by name:
 * the Ascend HAL, MOFED's ib_register_peer_memory_client and
 * __module_address.  The lowest file of npu_peer_mem.ko: it calls nothing
 * of ours.
 *
 * kallsyms_lookup_name() itself is not exported; a kprobe on it says where
 * it is.  The probe's address is not always the function's entry: with
 * x86 IBT the probe sits after the ENDBR (entry + 4), and an indirect call
 * there raises #CP on a CPU that enforces IBT (powerpc's local entry point
 * is another such case).  kallsyms gives the probe's offset into the
 * function, which takes us back to the entry, on every kernel alike.
 *
 * Every address resolved is kept, so that a test can compare each one
 * with /proc/kallsyms (debugfs npu_peer_mem/symbols).
 */
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "npu_provider.h"

#define NPU_SYM_LOOKUP	"kallsyms_lookup_name"
#define NPU_SYM_MAX	8

static struct {
	const char *name;
	unsigned long addr;
} npu_syms[NPU_SYM_MAX];
static unsigned int npu_nsyms;
static DEFINE_MUTEX(npu_sym_lock);
static unsigned long (*npu_kallsyms_lookup)(const char *name);

/* Keep @name's address for npu_sym_show(); the names are literals. */
static void npu_sym_note(const char *name, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < npu_nsyms; i++)
		if (!strcmp(npu_syms[i].name, name))
			return;
	if (npu_nsyms < NPU_SYM_MAX) {
		npu_syms[npu_nsyms].name = name;
		npu_syms[npu_nsyms].addr = addr;
		npu_nsyms++;
	}
}

/* The entry of kallsyms_lookup_name(), or 0.  Under npu_sym_lock. */
static unsigned long npu_sym_lookup_entry(void)
{
	struct kprobe kp = { .symbol_name = NPU_SYM_LOOKUP };
	static char buf[KSYM_SYMBOL_LEN];	/* ~660 bytes: not on the stack */
	unsigned long addr, off;
	size_t len = strlen(NPU_SYM_LOOKUP);
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("npu_peer_mem: kprobe on %s: %d\n", NPU_SYM_LOOKUP, ret);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

	/* "kallsyms_lookup_name+0x4/0x40": the probe's offset in the function */
	sprint_symbol(buf, addr);
	if (strncmp(buf, NPU_SYM_LOOKUP, len) || buf[len] != '+' ||
	    sscanf(buf + len, "+%lx/", &off) != 1 || off > addr) {
		pr_err("npu_peer_mem: the kprobe on %s sits at %s, not in it\n",
		       NPU_SYM_LOOKUP, buf);
		return 0;
	}
	return addr - off;
}

unsigned long npu_lookup_symbol(const char *name)
{
	unsigned long addr = 0;

	mutex_lock(&npu_sym_lock);
	if (!npu_kallsyms_lookup) {
		addr = npu_sym_lookup_entry();
		if (addr) {
			npu_sym_note(NPU_SYM_LOOKUP, addr);
			npu_kallsyms_lookup = (void *)addr;
		}
	}
	addr = npu_kallsyms_lookup ? npu_kallsyms_lookup(name) : 0;
	if (addr)
		npu_sym_note(name, addr);
	mutex_unlock(&npu_sym_lock);
	return addr;
}

/*
 * Hold the module that defines @addr, found by name like everything else
 * (__module_address() is not exported either).  *@mod is NULL for
 * vmlinux, or when the lookup is not available; -ENODEV when the module
 * is going away.
 */
int npu_module_hold(unsigned long addr, struct module **mod)
{
	struct module *(*module_address)(unsigned long addr);
	int ret = 0;

	*mod = NULL;
	module_address = (void *)npu_lookup_symbol("__module_address");
	if (!module_address)
		return 0;
	preempt_disable();
	*mod = module_address(addr);
	if (*mod && !try_module_get(*mod)) {
		*mod = NULL;
		ret = -ENODEV;
	}
	preempt_enable();
	return ret;
}

/* One line a symbol resolved: "name 0xaddr", as /proc/kallsyms has it. */
int npu_sym_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&npu_sym_lock);
	for (i = 0; i < npu_nsyms; i++)
		seq_printf(m, "%s 0x%lx\n", npu_syms[i].name, npu_syms[i].addr);
	mutex_unlock(&npu_sym_lock);
	return 0;
}
