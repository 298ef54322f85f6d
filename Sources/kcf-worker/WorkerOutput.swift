import Foundation

/// Writes one line to stdout, unbuffered (one write(2)), so that a line is out before the next step starts.
func acknowledge(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes one line to stderr, unbuffered.
func report(_ line: String) {
    FileHandle.standardError.write(Data(("kcf-worker: " + line + "\n").utf8))
}
