/*
 * sslkeylog.so: an LD_PRELOAD shim that makes any program linked dynamically against OpenSSL
 * 1.1.1 or 3.x write an NSS key log to the file named by SSLKEYLOGFILE. It wraps SSL_new():
 * before the real SSL_new runs, the context gets a keylog callback (SSL_CTX_set_keylog_callback,
 * OpenSSL's own hook), which appends each line OpenSSL hands it. Used for the librdkafka
 * capture (kcat, Debian's librdkafka linked against the system libssl): the confluent-kafka
 * wheels link OpenSSL statically, so no preloaded library can reach theirs.
 *
 *   cc -shared -fPIC -O2 -o sslkeylog.so sslkeylog.c -ldl
 *   SSLKEYLOGFILE=/tmp/keys LD_PRELOAD=./sslkeylog.so kcat ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef void (*keylog_cb)(const SSL *ssl, const char *line);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void write_line(const SSL *ssl, const char *line) {
    (void)ssl;
    const char *path = getenv("SSLKEYLOGFILE");
    if (path == NULL || *path == '\0') return;
    pthread_mutex_lock(&lock);
    FILE *f = fopen(path, "a");
    if (f != NULL) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
    pthread_mutex_unlock(&lock);
}

SSL *SSL_new(SSL_CTX *ctx) {
    static SSL *(*real_new)(SSL_CTX *) = NULL;
    static void (*set_cb)(SSL_CTX *, keylog_cb) = NULL;
    if (real_new == NULL) {
        real_new = (SSL * (*)(SSL_CTX *)) dlsym(RTLD_NEXT, "SSL_new");
        set_cb = (void (*)(SSL_CTX *, keylog_cb))dlsym(RTLD_NEXT, "SSL_CTX_set_keylog_callback");
    }
    if (set_cb != NULL && ctx != NULL) set_cb(ctx, write_line);
    return real_new(ctx);
}
