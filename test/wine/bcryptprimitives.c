/*
 * A test harness, not part of the product: bcryptprimitives.dll with the one
 * function Go programs since Go 1.22 import from it, ProcessPrng, which
 * Debian bookworm's Wine 8.0 lacks (the program does not start without it).
 * It fills the buffer from advapi32's RtlGenRandom (SystemFunction036).
 * Built with Debian's gcc-mingw-w64-x86-64 by test/bridge_wine_test.go and
 * put in the Wine prefix's system32, loaded by
 * WINEDLLOVERRIDES=bcryptprimitives=n.
 */
#include <windows.h>

typedef BOOLEAN(WINAPI *rtl_gen_random)(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    static rtl_gen_random gen;
    if (!gen) {
        HMODULE advapi = LoadLibraryA("advapi32.dll");
        if (!advapi)
            return FALSE;
        gen = (rtl_gen_random)(void *)GetProcAddress(advapi, "SystemFunction036");
        if (!gen)
            return FALSE;
    }
    while (length > 0) {
        ULONG n = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!gen(data, n))
            return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
