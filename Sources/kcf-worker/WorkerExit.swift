import Foundation

/// The worker's exit statuses.
enum WorkerExit {
    static let success: Int32 = 0
    static let usage: Int32 = 1
    static let keychainError: Int32 = 2
    static let checkFailed: Int32 = 3
}
