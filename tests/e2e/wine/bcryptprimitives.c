/* A stand-in for Windows' bcryptprimitives.dll, for Wine 8.0 (Debian 12's), which has none: Rust's
 * standard library (1.78 on) gets its random bytes from its ProcessPrng export, and a binary that cannot
 * load it exits at start. This one answers ProcessPrng from advapi32's RtlGenRandom (SystemFunction036),
 * which Wine has. Built with MinGW-w64 into the test's own Wine prefix (tests/e2e/harness/wine.py); never
 * shipped. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    /* RtlGenRandom takes a ULONG length: fill larger requests in pieces. */
    while (len > 0) {
        ULONG piece = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, piece)) return FALSE;
        data += piece;
        len -= piece;
    }
    return TRUE;
}
