/// For `--help`: the environment variables rtcshare reads, beside its options.
enum EnvironmentHelp {
    static var helpText: String {
        let lines: [(String, String)] = [
            ("DISPLAY", "the X server of --source x11 without :DISPLAY (XAUTHORITY: its cookie)"),
            ("WAYLAND_DISPLAY", "the compositor of --source wayland (in XDG_RUNTIME_DIR; default wayland-0)"),
            ("RTCSHARE_OPENH264", "the openh264 library to load for H.264, as a path (e.g. a build whose patent "
                + "licence comes with the binary); default libopenh264.so.7 (Debian 12), then .so.8 (Debian 13)"),
            ("NOTIFY_SOCKET", "set by systemd (Type=notify): READY=1, STATUS= and WATCHDOG=1 go there"),
            ("JOURNAL_STREAM", "set by systemd: standard error is the journal, so each line carries its level"),
        ]
        return lines.map { name, text in
            "  " + name + "\n" + CommandLineTool.wrap(text, indent: 8, width: 80) + "\n"
        }.joined()
    }
}
