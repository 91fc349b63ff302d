"""profile_case.py's grouping of perf samples: each libvpx stage, the kernel's pipe and
scheduling, rtcshare's change map, by the names perf reports."""
import unittest

from profile_case import group


class GroupTests(unittest.TestCase):
    def test_libvpx_functions_go_to_their_stage(self):
        cases = {
            "vp8_loop_filter_frame": "libvpx: loop filter and its level search",
            "vp8cx_pick_filter_level_fast": "libvpx: loop filter and its level search",
            "vp8_copy_and_extend_frame": "libvpx: source copy into the lookahead, border extension",
            "vp8_copy_mem16x16_sse2": "libvpx: macroblock copies (source to scratch, skipped blocks' prediction)",
            "vpx_variance16x16_avx2": "libvpx: mode decision and motion search",
            "vp8_pick_inter_mode": "libvpx: mode decision and motion search",
            "vp8_pack_tokens": "libvpx: tokens and boolean coder",
            "vp8_short_fdct8x4_sse2": "libvpx: transform, quantizer, reconstruction",
            "encode_mb_row": "libvpx: frame and row driver, rate control",
            "0x000000000029c832": "libvpx: other",
        }
        for sym, want in cases.items():
            self.assertEqual(group("libvpx.so.7.1.0", sym), want, sym)

    def test_kernel_rtcshare_and_libraries(self):
        self.assertEqual(group("[kernel.kallsyms]", "_copy_to_iter"), "kernel: reading the pipe")
        self.assertEqual(group("[kernel.kallsyms]", "finish_task_switch.isra.0"), "kernel: scheduling, wake-ups")
        self.assertEqual(group("rtcshare", "ccore_change_signature_avx2"), "rtcshare: change map")
        self.assertEqual(group("rtcshare", "$s8RTCShare12ShareSessionC3run"), "rtcshare: the rest (pacer, RTP, session)")
        self.assertEqual(group("libsrtp2.so.1", "srtp_protect"), "RTP/SRTP: protect (libsrtp2, NSS, OpenSSL)")
        self.assertEqual(group("libc.so.6", "__memmove_avx512_unaligned_erms"), "libc: memcpy, memmove, memset")
        self.assertEqual(group("ld-linux-x86-64.so.2", "do_lookup_x"), "start-up: dynamic linking")


if __name__ == "__main__":
    unittest.main()
