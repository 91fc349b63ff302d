// A window during which one library's memset leaves out the pages that already read as zeros
// (see CShims.h, "start-up zero-fill"). The library calls memset through a slot of its global
// offset table; the slot is pointed at `sparse_memset` for the window and put back after. The
// slot is found from the library's own dynamic section (its relocations naming memset), so no
// other library and none of our own code is affected.
//
// Safe with other threads: `sparse_memset` gives the same bytes as memset for any caller at any
// time (it skips only pages that read as zeros already), so a call from another thread inside
// the window is still right. Windows do not overlap (a second begin is refused).
#define _GNU_SOURCE  // dladdr1, dl_iterate_phdr
#include "CShims.h"

#include <CCore.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RTCS_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define RTCS_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define RTCS_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define RTCS_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

// Fills shorter than this go straight through: smaller blocks come from malloc's heap, whose
// pages are mostly resident already (`ccore_heap_map_large_fresh` maps from 128 KiB up), and a
// short fill is not worth reading /proc for.
enum { SPARSE_MINIMUM_BYTES = 128 << 10, MAX_SLOTS = 4 };

typedef void *(*memset_fn)(void *, int, size_t);

static atomic_int window_open;
static memset_fn original;                // what the slots held (libc's memset)
static void **slots[MAX_SLOTS];
static size_t slot_count;
static int slots_read_only;               // the slots' pages are RELRO: made read-only again
static atomic_size_t skipped_total;
// The largest fill of the window (the library's thread only: other threads' fills are not
// recorded while one is open, as their order is unknown).
static void *largest_start;
static size_t largest_bytes;
static pthread_t window_thread;

static void *sparse_memset(void *p, int c, size_t n) {
    if (c != 0 || n < SPARSE_MINIMUM_BYTES) return original(p, c, n);
    if (pthread_equal(pthread_self(), window_thread) && n > largest_bytes) {
        largest_start = p;
        largest_bytes = n;
    }
    size_t skipped = 0;
    ccore_zero_fill_sparse(p, n, original, &skipped);
    atomic_fetch_add_explicit(&skipped_total, skipped, memory_order_relaxed);
    return p;
}

#if defined(RTCS_R_JUMP_SLOT)
// A pointer from the dynamic section: glibc has relocated most of them in place, but not on
// every architecture, so an offset below the load address is taken as unrelocated.
static uintptr_t dyn_address(const struct link_map *map, ElfW(Addr) value) {
    return value < map->l_addr ? map->l_addr + value : value;
}

// Adds the slots of `relocations` that bind memset.
static void collect(const struct link_map *map, const ElfW(Rela) *relocations, size_t count,
                    const ElfW(Sym) *symbols, const char *strings, size_t strings_size) {
    for (size_t i = 0; i < count && slot_count < MAX_SLOTS; i++) {
        const ElfW(Rela) *r = &relocations[i];
        unsigned long type = ELF64_R_TYPE(r->r_info);
        if (type != RTCS_R_JUMP_SLOT && type != RTCS_R_GLOB_DAT) continue;
        const ElfW(Sym) *symbol = &symbols[ELF64_R_SYM(r->r_info)];
        if (symbol->st_name >= strings_size) continue;
        if (strncmp(strings + symbol->st_name, "memset", strings_size - symbol->st_name) != 0) continue;
        slots[slot_count++] = (void **)(map->l_addr + r->r_offset);
    }
}

typedef struct {
    uintptr_t base;
    uintptr_t relro_start, relro_end;
} relro_query;

static int find_relro(struct dl_phdr_info *info, size_t size, void *context) {
    relro_query *q = context;
    if (info->dlpi_addr != q->base) return 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *h = &info->dlpi_phdr[i];
        if (h->p_type != PT_GNU_RELRO) continue;
        // The pages ld.so made read-only: whole pages only, a last partial one stays writable.
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        q->relro_start = (q->base + h->p_vaddr) & ~(page - 1);
        q->relro_end = (q->base + h->p_vaddr + h->p_memsz) & ~(page - 1);
    }
    return 1;
}

// Finds the memset slots of the object holding `symbol`; 0 when at least one was found.
static int find_slots(const void *symbol) {
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(symbol, &info, (void **)&map, RTLD_DL_LINKMAP) || map == NULL || map->l_ld == NULL) return -1;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_size = 0, rela_size = 0, strings_size = 0;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    int plt_is_rela = 0;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_address(map, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_address(map, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dyn_address(map, d->d_un.d_ptr); break;
        case DT_STRTAB: strings = (const char *)dyn_address(map, d->d_un.d_ptr); break;
        case DT_STRSZ: strings_size = d->d_un.d_val; break;
        default: break;
        }
    }
    if (symbols == NULL || strings == NULL || strings_size == 0) return -1;
    slot_count = 0;
    if (jmprel && plt_is_rela) collect(map, jmprel, jmprel_size / sizeof *jmprel, symbols, strings, strings_size);
    if (rela) collect(map, rela, rela_size / sizeof *rela, symbols, strings, strings_size);
    if (slot_count == 0) return -1;
    relro_query q = {map->l_addr, 0, 0};
    dl_iterate_phdr(find_relro, &q);
    slots_read_only = 0;
    for (size_t i = 0; i < slot_count; i++) {
        uintptr_t a = (uintptr_t)slots[i];
        if (a >= q.relro_start && a < q.relro_end) slots_read_only = 1;
    }
    return 0;
}

// Makes the slots' pages writable (`writable`) or read-only again; 0 on success.
static int protect_slots(int writable) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < slot_count; i++) {
        uintptr_t start = (uintptr_t)slots[i] & ~(page - 1);
        if (mprotect((void *)start, page, writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0) return -1;
    }
    return 0;
}
#endif

const void *rtcs_openh264_symbol(void);  // openh264.c

// A symbol inside `library`, or NULL when it is not loaded.
static const void *library_symbol(rtcs_zerofill_library library) {
    switch (library) {
    case RTCS_ZEROFILL_LIBVPX: return (const void *)vpx_codec_vp8_cx;
    case RTCS_ZEROFILL_OPENH264: return rtcs_openh264_symbol();
    }
    return NULL;
}

int rtcs_zerofill_begin(rtcs_zerofill_library library) {
#if defined(RTCS_R_JUMP_SLOT)
    int expected = 0;
    if (!atomic_compare_exchange_strong(&window_open, &expected, 1)) return -1;
    const void *symbol = library_symbol(library);
    if (symbol == NULL || find_slots(symbol) != 0) goto refused;
    original = (memset_fn)*slots[0];
    for (size_t i = 1; i < slot_count; i++)
        if ((memset_fn)*slots[i] != original) goto refused;  // bound to different things: leave it
    if (slots_read_only && protect_slots(1) != 0) goto refused;
    atomic_store(&skipped_total, 0);
    largest_start = NULL;
    largest_bytes = 0;
    window_thread = pthread_self();
    for (size_t i = 0; i < slot_count; i++)
        __atomic_store_n(&slots[i][0], (void *)sparse_memset, __ATOMIC_RELEASE);
    return 0;
refused:
    slot_count = 0;
    atomic_store(&window_open, 0);
    return -1;
#else
    (void)library;
    return -1;
#endif
}

size_t rtcs_zerofill_end(void) {
#if defined(RTCS_R_JUMP_SLOT)
    if (!atomic_load(&window_open)) return 0;
    for (size_t i = 0; i < slot_count; i++)
        __atomic_store_n(&slots[i][0], (void *)original, __ATOMIC_RELEASE);
    if (slots_read_only) (void)protect_slots(0);
    slot_count = 0;
    size_t skipped = atomic_load(&skipped_total);
    atomic_store(&window_open, 0);
    return skipped;
#else
    return 0;
#endif
}

void rtcs_zerofill_largest(void **start, size_t *bytes) {
    if (start) *start = largest_start;
    if (bytes) *bytes = largest_bytes;
}
