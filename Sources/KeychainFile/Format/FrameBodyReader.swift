/// Reads the body of one frame from the file front to back through a window of about
/// ``ParallelTuning/windowSize`` bytes (or one field, if that is longer), so that replaying a large record never
/// holds the whole record in memory.
///
/// Like ``ByteReader``, every read checks the length first; a read past the end of the body is a
/// ``FrameProblem`` naming the field ("truncated …"), and a failing file read is one that carries the
/// file's error (``FrameProblem/ioError``), which the replay rethrows as it is.
struct FrameBodyReader {
    private let file: any KeychainFileHandle
    /// Where the body starts in the file.
    let bodyOffset: Int
    private let bodyLength: Int
    private let windowSize: Int
    /// The bytes read last; ranges returned by ``read(_:_:)`` index into it until the next read.
    private(set) var window: [UInt8] = []
    /// The body offset of `window[0]`.
    private var windowStart = 0
    /// The body offset of the next byte to read.
    private(set) var offset = 0

    init(file: any KeychainFileHandle, bodyOffset: Int, bodyLength: Int, windowSize: Int = RecordEncoder.chunkSize) {
        self.file = file
        self.bodyOffset = bodyOffset
        self.bodyLength = bodyLength
        self.windowSize = max(windowSize, 1)
    }

    var remaining: Int { bodyLength - offset }
    var isAtEnd: Bool { offset == bodyLength }

    /// Whether the next `count` bytes are already in ``window``: reading them returns a range there without
    /// loading a new window (which would invalidate the ranges returned before).
    func isBuffered(_ count: Int) -> Bool { offset + count <= windowStart + window.count }

    /// Makes the next `count` bytes readable in ``window`` and returns their range there, moving past them.
    ///
    /// `field` names what is read in the error; it is only made when a read fails (an interpolated name
    /// made for every box length cost a heap string each: ~4% of opening a large record).
    mutating func read(_ count: Int, _ field: @autoclosure () -> String) throws(FrameProblem) -> Range<Int> {
        guard count >= 0, remaining >= count else {
            throw FrameProblem(offset: bodyOffset + offset, reason: "truncated \(field())")
        }
        if offset + count > windowStart + window.count {
            let loadCount = min(max(count, windowSize), remaining)
            window = []  // released before the next window is read (WindowOpening may still hold it while it opens it)
            do {
                window = try file.readExactly(count: loadCount, at: bodyOffset + offset)
            } catch {
                throw FrameProblem(offset: bodyOffset + offset, reason: "\(error)", ioError: error)
            }
            windowStart = offset
        }
        let start = offset - windowStart
        offset += count
        return start..<(start + count)
    }

    mutating func readUInt8(_ field: @autoclosure () -> String) throws(FrameProblem) -> UInt8 {
        window[try read(1, field()).lowerBound]
    }

    mutating func readUInt32(_ field: @autoclosure () -> String) throws(FrameProblem) -> UInt32 {
        var value: UInt32 = 0
        for index in try read(4, field()) { value = value << 8 | UInt32(window[index]) }
        return value
    }

    mutating func readUInt64(_ field: @autoclosure () -> String) throws(FrameProblem) -> UInt64 {
        var value: UInt64 = 0
        for index in try read(8, field()) { value = value << 8 | UInt64(window[index]) }
        return value
    }
}
