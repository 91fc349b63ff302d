import Foundation
import Dispatch

/// The exit of a `Process`, as something to wait on: Foundation calls the termination handler
/// when the child is reaped, so a test blocks until that moment (or its timeout) instead of
/// polling `isRunning`. Made before `run()`, which is when the handler must be in place.
final class ExitSignal: Sendable {
    private let exited = DispatchGroup()

    init(_ process: Process) {
        exited.enter()
        let group = exited
        process.terminationHandler = { _ in group.leave() }
    }

    /// Waits up to `timeout` seconds; true once the process has exited.
    func wait(timeout: TimeInterval) -> Bool {
        exited.wait(timeout: .now() + timeout) == .success
    }
}
