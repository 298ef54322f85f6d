#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Puts the terminal's settings back if a signal ends the process while a prompt has echo turned off.
///
/// Signal handlers cannot capture context, so the state lives in globals. They are written only by the main
/// thread (kcf has no other) before the handlers are installed and after they are removed; the handler only
/// reads them. Everything the handler calls — tcsetattr(3), write(2), _exit(2) — is async-signal-safe.
enum TerminalRestore {
    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Records the settings to restore and installs the handlers.
    static func arm(descriptor: Int32, settings: termios) {
        restoreSettings = settings
        restoreDescriptor = descriptor
        previousHandlers = signals.map { signal($0, restoreAndExit) }
    }

    /// Restores the settings and the previous handlers.
    static func disarm() {
        guard restoreDescriptor >= 0 else { return }
        var settings = restoreSettings
        _ = tcsetattr(restoreDescriptor, TCSAFLUSH, &settings)
        for (signalNumber, handler) in zip(signals, previousHandlers) { _ = signal(signalNumber, handler) }
        previousHandlers = []
        restoreDescriptor = -1
    }
}

/// The terminal whose settings the handler restores, or -1 when no prompt is active.
nonisolated(unsafe) private var restoreDescriptor: Int32 = -1
/// The settings to restore.
nonisolated(unsafe) private var restoreSettings = termios()
/// The handlers that were installed before ``TerminalRestore/arm(descriptor:settings:)``.
nonisolated(unsafe) private var previousHandlers: [(@convention(c) (Int32) -> Void)?] = []

/// The signal handler: restore the terminal, end the prompt's line, exit with 128 + the signal.
private let restoreAndExit: @convention(c) (Int32) -> Void = { signalNumber in
    if restoreDescriptor >= 0 {
        var settings = restoreSettings
        _ = tcsetattr(restoreDescriptor, TCSANOW, &settings)
    }
    var newline: UInt8 = 0x0A
    _ = write(2, &newline, 1)
    _exit(128 + signalNumber)
}
