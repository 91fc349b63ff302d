#define _GNU_SOURCE
#include "ccore/codepages.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// Whether the object's dynamic section asks for text relocations: its code pages may then have
// been written (copied on write) and must not be dropped.
static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_TEXTREL) return 1;
            if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

static int overlaps_relro(const struct dl_phdr_info *info, uintptr_t start, uintptr_t end) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO) continue;
        uintptr_t rs = info->dlpi_addr + ph->p_vaddr, re = rs + ph->p_memsz;
        if (start < re && rs < end) return 1;
    }
    return 0;
}

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    size_t *advised = data;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    if (strstr(name, "linux-vdso") != NULL || strstr(name, "linux-gate") != NULL) return 0;
    if (has_text_relocations(info)) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) != 0) continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (overlaps_relro(info, start, end)) continue;
        start = (start + page - 1) & ~(page - 1);
        end &= ~(page - 1);
        if (end <= start) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) *advised += end - start;
    }
    return 0;
}

ccore_status ccore_release_code_pages(size_t *advised_bytes) {
    if (advised_bytes == NULL) return CCORE_ERR_INVALID;
    *advised_bytes = 0;
    dl_iterate_phdr(release_object, advised_bytes);
    return CCORE_OK;
}
