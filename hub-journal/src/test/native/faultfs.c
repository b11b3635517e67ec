/*
 * faultfs: an LD_PRELOAD shim that puts faults between SQLite and the disk, for the journal's
 * fault and power-loss tests. It acts only on files whose path contains FAULTFS_MATCH; every
 * other file (the JVM's own) passes straight through.
 *
 * SQLite's "-shm" wal-index is left alone: it is mapped shared memory, never durable state.
 *
 * Control: FAULTFS_CONTROL names a file of at least 64 bytes that the test maps too; the shim
 * reads it on every call, so the test changes faults while the process runs:
 *   byte 0  write errno: non-zero makes pwrite64/write on a matched file fail with it (EIO, ENOSPC)
 *   byte 1  fsync errno: non-zero makes fsync on a matched file fail with it
 *   byte 2  torn write: non-zero makes the next matched pwrite64 write half its bytes, then
 *           the process kills itself (a crash in the middle of writing a page)
 *   bytes  8..15  faults injected so far (little-endian uint64, written by the shim)
 *   bytes 16..23  fsyncs of matched files that succeeded
 *
 * Power loss: with FAULTFS_POWERLOSS=1, the process sees each matched file as a memory image
 * (a page cache of our own, per path, loaded from the disk at first open): writes, truncations,
 * reads and fstat go to it, and only an fsync puts the pages written since the last one (and
 * the file's size) on the disk. SIGKILL then loses exactly what was never synced, which is
 * what a power cut does to a page cache (one of the outcomes it allows). A normal exit writes
 * everything back, as the operating system would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FDS 65536
#define MAX_FILES 64
#define PAGE 4096

/* A matched file as the process sees it (power-loss mode): its whole content in memory, with
   the pages written since the last fsync marked; the disk holds what was synced. */
struct file {
    char path[4096];
    int loaded;
    unsigned char *data;
    size_t size, cap;
    unsigned char *dirty; /* one byte per page */
    size_t dirty_cap;
};

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct file *files[MAX_FILES];
static struct file *by_fd[MAX_FDS];
static volatile unsigned char *control;
static const char *match;
static int powerloss;

static int (*real_open64)(const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fxstat64)(int, int, struct stat64 *);
static int (*real_unlink)(const char *);

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve_once(void) {
    real_close = dlsym(RTLD_NEXT, "close");
    real_pread64 = dlsym(RTLD_NEXT, "pread64");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_write = dlsym(RTLD_NEXT, "write");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
    real_unlink = dlsym(RTLD_NEXT, "unlink");
    /* glibc 2.33+ keeps __fxstat64 only as a compatibility symbol, which plain dlsym cannot see */
    real_fxstat64 = dlvsym(RTLD_NEXT, "__fxstat64", "GLIBC_2.2.5");
    match = getenv("FAULTFS_MATCH");
    powerloss = getenv("FAULTFS_POWERLOSS") != NULL && strcmp(getenv("FAULTFS_POWERLOSS"), "1") == 0;
    const char *ctl = getenv("FAULTFS_CONTROL");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    if (ctl != NULL) {
        int fd = real_open64(ctl, O_RDWR);
        if (fd >= 0) {
            void *m = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                control = m;
            }
            real_close(fd);
        }
    }
}

static void resolve(void) {
    pthread_once(&resolved, resolve_once);
}

static void count(int at) {
    if (control) {
        __atomic_add_fetch((uint64_t *) (control + at), 1, __ATOMIC_SEQ_CST);
    }
}

static struct file *tracked(int fd) {
    return fd >= 0 && fd < MAX_FDS ? by_fd[fd] : NULL;
}

static struct file *file_for(const char *path) {
    for (int i = 0; i < MAX_FILES; i++) {
        if (files[i] && strcmp(files[i]->path, path) == 0) {
            return files[i];
        }
    }
    for (int i = 0; i < MAX_FILES; i++) {
        if (!files[i]) {
            files[i] = calloc(1, sizeof(struct file));
            strncpy(files[i]->path, path, sizeof(files[i]->path) - 1);
            return files[i];
        }
    }
    return NULL;
}

static void reserve(struct file *f, size_t size) {
    if (size > f->cap) {
        size_t cap = f->cap ? f->cap : 65536;
        while (cap < size) {
            cap *= 2;
        }
        f->data = realloc(f->data, cap);
        memset(f->data + f->cap, 0, cap - f->cap);
        f->cap = cap;
    }
    size_t pages = (size + PAGE - 1) / PAGE;
    if (pages > f->dirty_cap) {
        size_t cap = f->dirty_cap ? f->dirty_cap : 64;
        while (cap < pages) {
            cap *= 2;
        }
        f->dirty = realloc(f->dirty, cap);
        memset(f->dirty + f->dirty_cap, 0, cap - f->dirty_cap);
        f->dirty_cap = cap;
    }
}

static void mark(struct file *f, size_t from, size_t to) {
    for (size_t page = from / PAGE; page * PAGE < to; page++) {
        f->dirty[page] = 1;
    }
}

/* The first time the process opens a matched file, its content is read from the disk. */
static void load(struct file *f, int fd, int truncate) {
    if (f->loaded) {
        if (truncate) {
            f->size = 0;
            mark(f, 0, PAGE);
        }
        return;
    }
    f->loaded = 1;
    f->size = 0;
    if (truncate) {
        return;
    }
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = real_pread64(fd, buf, sizeof buf, (off_t) f->size);
        if (n <= 0) {
            break;
        }
        reserve(f, f->size + (size_t) n);
        memcpy(f->data + f->size, buf, (size_t) n);
        f->size += (size_t) n;
    }
}

/* Puts the pages written since the last sync on the disk, and the disk's size right. */
static int flush(struct file *f, int fd) {
    for (size_t page = 0; page * PAGE < f->size || page < f->dirty_cap; page++) {
        if (page >= f->dirty_cap || !f->dirty[page]) {
            continue;
        }
        size_t from = page * PAGE;
        if (from < f->size) {
            size_t to = from + PAGE < f->size ? from + PAGE : f->size;
            if (real_pwrite64(fd, f->data + from, to - from, (off_t) from) != (ssize_t) (to - from)) {
                return -1;
            }
        }
        f->dirty[page] = 0;
    }
    struct stat64 st;
    if (real_fxstat64(1, fd, &st) == 0 && (size_t) st.st_size != f->size) {
        if (real_ftruncate64(fd, (off_t) f->size) != 0) {
            return -1;
        }
    }
    return 0;
}

int open64(const char *path, int flags, ...) {
    resolve();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int fd = real_open64(path, flags, mode);
    size_t len = strlen(path);
    int shm = len > 4 && strcmp(path + len - 4, "-shm") == 0; /* shared memory, mapped: not storage */
    if (fd >= 0 && fd < MAX_FDS && match && !shm && strstr(path, match)) {
        pthread_mutex_lock(&lock);
        struct file *f = file_for(path);
        by_fd[fd] = f;
        if (f && powerloss) {
            load(f, fd, (flags & O_TRUNC) != 0);
        }
        pthread_mutex_unlock(&lock);
    }
    return fd;
}

int close(int fd) {
    resolve();
    if (fd >= 0 && fd < MAX_FDS) {
        by_fd[fd] = NULL; /* the file's pending writes stay: a page cache outlives the descriptor */
    }
    return real_close(fd);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) {
    resolve();
    struct file *f = tracked(fd);
    if (!f) {
        return real_pwrite64(fd, buf, n, offset);
    }
    if (control && control[0]) {
        count(8);
        errno = control[0];
        return -1;
    }
    if (control && control[2] && n > 1) {
        real_pwrite64(fd, buf, n / 2, offset); /* half a page reaches the page cache ... */
        count(8);
        raise(SIGKILL);                        /* ... and the machine goes down */
    }
    if (!powerloss) {
        return real_pwrite64(fd, buf, n, offset);
    }
    pthread_mutex_lock(&lock);
    reserve(f, (size_t) offset + n);
    if ((size_t) offset > f->size) {
        memset(f->data + f->size, 0, (size_t) offset - f->size); /* a hole reads as zeros */
    }
    memcpy(f->data + offset, buf, n);
    if ((size_t) offset + n > f->size) {
        f->size = (size_t) offset + n;
    }
    mark(f, (size_t) offset, (size_t) offset + n);
    pthread_mutex_unlock(&lock);
    return (ssize_t) n;
}

ssize_t write(int fd, const void *buf, size_t n) {
    resolve();
    if (tracked(fd) && control && control[0]) {
        count(8);
        errno = control[0];
        return -1;
    }
    return real_write(fd, buf, n);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t offset) {
    resolve();
    struct file *f = tracked(fd);
    if (!f || !powerloss) {
        return real_pread64(fd, buf, n, offset);
    }
    pthread_mutex_lock(&lock);
    size_t got = 0;
    if ((size_t) offset < f->size) {
        got = f->size - (size_t) offset < n ? f->size - (size_t) offset : n;
        memcpy(buf, f->data + offset, got);
    }
    pthread_mutex_unlock(&lock);
    return (ssize_t) got;
}

int fsync(int fd) {
    resolve();
    struct file *f = tracked(fd);
    if (!f) {
        return real_fsync(fd);
    }
    if (control && control[1]) {
        count(8);
        errno = control[1];
        return -1;
    }
    int rc = 0;
    if (powerloss) {
        pthread_mutex_lock(&lock);
        rc = flush(f, fd);
        pthread_mutex_unlock(&lock);
    }
    if (rc != 0) {
        return -1;
    }
    rc = real_fsync(fd);
    if (rc == 0) {
        count(16);
    }
    return rc;
}

int ftruncate64(int fd, off_t length) {
    resolve();
    struct file *f = tracked(fd);
    if (!f || !powerloss) {
        return real_ftruncate64(fd, length);
    }
    pthread_mutex_lock(&lock);
    reserve(f, (size_t) length);
    if ((size_t) length > f->size) {
        memset(f->data + f->size, 0, (size_t) length - f->size);
        mark(f, f->size, (size_t) length);
    }
    f->size = (size_t) length;
    mark(f, (size_t) length, (size_t) length + 1); /* the disk's size is put right at the next sync */
    pthread_mutex_unlock(&lock);
    return 0;
}

int unlink(const char *path) {
    resolve();
    if (powerloss && match && strstr(path, match)) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_FILES; i++) {
            if (files[i] && strcmp(files[i]->path, path) == 0) {
                files[i]->loaded = 0;
                files[i]->size = 0;
                memset(files[i]->dirty, 0, files[i]->dirty_cap);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return real_unlink(path);
}

int __fxstat64(int version, int fd, struct stat64 *st) {
    resolve();
    int rc = real_fxstat64(version, fd, st);
    struct file *f = tracked(fd);
    if (rc == 0 && f && powerloss) {
        pthread_mutex_lock(&lock);
        st->st_size = (off_t) f->size;
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

/* A normal exit lets the operating system write what it holds. */
__attribute__((destructor)) static void write_back(void) {
    if (!powerloss) {
        return;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_FILES; i++) {
        if (files[i] && files[i]->loaded) {
            int fd = real_open64(files[i]->path, O_WRONLY);
            if (fd >= 0) {
                flush(files[i], fd);
                real_close(fd);
            }
        }
    }
    pthread_mutex_unlock(&lock);
}
