// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sym.c - functions of other modules bound by name, each with its
 * module held: the Ascend HAL and MOFED's ib_register_peer_memory_client.
 * The lowest file of npu_peer_mem.ko: it calls nothing of ours.
 *
 * __symbol_get() finds an export and holds its module.  From 6.5 (and in
 * stable trees: Debian's 6.1 and 5.10) it finds GPL exports only: the
 * HAL's are, MOFED's register call is not.  For those,
 * kallsyms_lookup_name() (itself found through a kprobe), and
 * __module_address() to hold the owner.  An address found that way is
 * called indirectly: on a kernel built with IBT its first instruction
 * must be ENDBR64, or the call faults on a CPU that enforces IBT (the
 * kprobe sits after it, and objtool seals the ENDBR of functions nobody
 * takes the address of); we refuse such an entry rather than call it.
 *
 * Every address bound is kept for debugfs npu_peer_mem/symbols, so that a
 * test can compare it with /proc/kallsyms.
 */
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "npu_provider.h"

#define NPU_SYM_LOOKUP	"kallsyms_lookup_name"
#define NPU_SYM_MAX	8
#define NPU_ENDBR64	0xfa1e0ff3u	/* f3 0f 1e fa, read little-endian */

static struct {
	const char *name;
	unsigned long addr;
	const char *how;	/* "export", "kallsyms" or "kallsyms endbr64" */
} npu_syms[NPU_SYM_MAX];
static unsigned int npu_nsyms;
static DEFINE_MUTEX(npu_sym_lock);
static unsigned long (*npu_kallsyms_lookup)(const char *name);
static struct module *(*npu_module_address)(unsigned long addr);

/* Keep @name's address for npu_sym_show(); the names are literals. */
static void npu_sym_note(const char *name, unsigned long addr, const char *how)
{
	unsigned int i;

	for (i = 0; i < npu_nsyms; i++)
		if (!strcmp(npu_syms[i].name, name))
			return;
	if (npu_nsyms < NPU_SYM_MAX) {
		npu_syms[npu_nsyms].name = name;
		npu_syms[npu_nsyms].addr = addr;
		npu_syms[npu_nsyms].how = how;
		npu_nsyms++;
	}
}

/* how a symbol found by name was bound: its entry checked under IBT */
#define NPU_SYM_BY_NAME	(IS_ENABLED(CONFIG_X86_KERNEL_IBT) ? \
			 "kallsyms endbr64" : "kallsyms")

/* May @addr, found by name, be called indirectly on this kernel? */
static bool npu_sym_callable(const char *name, unsigned long addr)
{
#ifdef CONFIG_X86_KERNEL_IBT
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) ||
	    insn != NPU_ENDBR64) {
		pr_err("npu_peer_mem: %s at 0x%lx does not start with ENDBR64 (0x%08x): an indirect call would fault under IBT, refused\n",
		       name, addr, insn);
		return false;
	}
#endif
	return true;
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
	addr -= off;
	return npu_sym_callable(NPU_SYM_LOOKUP, addr) ? addr : 0;
}

/* Is there a symbol @name?  A kprobe on it says, calling nothing. */
static bool npu_sym_exists(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	int ret = register_kprobe(&kp);

	if (!ret)
		unregister_kprobe(&kp);
	return ret != -ENOENT;
}

/*
 * @name's address through kallsyms into *@addr, callable: 0; -ENOENT when
 * there is no such symbol; -EPERM when there is one we cannot call (or
 * cannot look up without calling what we may not).  Under npu_sym_lock.
 */
static int npu_sym_kallsyms(const char *name, unsigned long *addr)
{
	unsigned long a;

	if (!npu_kallsyms_lookup) {
		a = npu_sym_lookup_entry();
		if (!a)
			return npu_sym_exists(name) ? -EPERM : -ENOENT;
		npu_sym_note(NPU_SYM_LOOKUP, a, NPU_SYM_BY_NAME);
		npu_kallsyms_lookup = (void *)a;
	}
	a = npu_kallsyms_lookup(name);
	if (!a)
		return -ENOENT;
	if (!npu_sym_callable(name, a))
		return -EPERM;
	npu_sym_note(name, a, NPU_SYM_BY_NAME);
	*addr = a;
	return 0;
}

/*
 * On an IBT kernel, that the check refuses what is not an entry: the
 * kprobe's own address in kallsyms_lookup_name (past its ENDBR64) is
 * refused, the entry taken.  Says so in one line; -EPROTO if not.
 */
int npu_sym_ibt_selftest(void)
{
	struct kprobe kp = { .symbol_name = NPU_SYM_LOOKUP };
	unsigned long entry, in;
	bool ok;
	int ret;

	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT)) {
		pr_info("npu_peer_mem: IBT self-test: not an IBT kernel, nothing to check\n");
		return 0;
	}
	ret = register_kprobe(&kp);
	if (ret < 0)
		return ret;
	in = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	mutex_lock(&npu_sym_lock);
	entry = npu_sym_lookup_entry();
	mutex_unlock(&npu_sym_lock);
	ok = entry && in != entry && npu_sym_callable("the entry", entry) &&
	     !npu_sym_callable("the probe's address", in);
	pr_info("npu_peer_mem: IBT self-test: %s entry 0x%lx %s, 0x%lx (+%lu) %s\n",
		NPU_SYM_LOOKUP, entry, ok ? "taken" : "?", in, in - entry,
		ok ? "refused" : "not refused: the check is broken");
	return ok ? 0 : -EPROTO;
}

/* Hold the module defining @addr (none for vmlinux); -ENODEV if we cannot. */
static int npu_sym_hold(const char *name, unsigned long addr,
			struct module **mod)
{
	unsigned long a;
	int ret = 0;

	if (!npu_module_address) {
		if (npu_sym_kallsyms("__module_address", &a)) {
			pr_err("npu_peer_mem: no __module_address to call: cannot hold the module of %s\n",
			       name);
			return -ENODEV;
		}
		npu_module_address = (void *)a;
	}
	preempt_disable();
	*mod = npu_module_address(addr);
	if (*mod && !try_module_get(*mod))
		ret = -ENODEV;
	preempt_enable();
	if (ret)
		pr_err("npu_peer_mem: the module of %s is going away\n", name);
	return ret;
}

/*
 * Bind @name into @s with its module held.  0, -ENOENT when the symbol is
 * nowhere, -EPERM when it cannot be called safely, -ENODEV when its
 * module cannot be held.
 */
int npu_sym_get(const char *name, struct npu_sym *s)
{
	static char buf[KSYM_SYMBOL_LEN];
	unsigned long addr;
	char *mod;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->name = name;
	mutex_lock(&npu_sym_lock);
	addr = (unsigned long)__symbol_get(name);
	if (addr) {
		s->exported = true;
		npu_sym_note(name, addr, "export");
	} else {
		ret = npu_sym_kallsyms(name, &addr) ?:
		      npu_sym_hold(name, addr, &s->mod);
	}
	if (!ret) {
		s->addr = addr;
		/* "name+0x0/0x40 [module]": the owner, for the load line */
		sprint_symbol(buf, addr);
		mod = strchr(buf, '[');
		strscpy(s->owner, mod ? mod + 1 : "vmlinux", sizeof(s->owner));
		mod = strchr(s->owner, ']');
		if (mod)
			*mod = '\0';
	}
	mutex_unlock(&npu_sym_lock);
	return ret;
}

/* Let go of what npu_sym_get() bound. */
void npu_sym_put(struct npu_sym *s)
{
	if (!s->addr)
		return;
	if (s->exported)
		__symbol_put(s->name);
	else
		module_put(s->mod);
	s->addr = 0;
}

/*
 * One line a symbol bound: "name 0xaddr how", the address as
 * /proc/kallsyms has it; "how" ends "endbr64" where the entry was checked.
 */
int npu_sym_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&npu_sym_lock);
	for (i = 0; i < npu_nsyms; i++)
		seq_printf(m, "%s 0x%lx %s\n", npu_syms[i].name,
			   npu_syms[i].addr, npu_syms[i].how);
	mutex_unlock(&npu_sym_lock);
	return 0;
}
