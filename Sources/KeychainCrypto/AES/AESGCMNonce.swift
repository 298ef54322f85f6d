extension AES.GCM {
    /// A 96-bit AES-GCM nonce. Never seal two messages with the same key and nonce.
    ///
    /// For example:
    /// ```swift
    /// let random = AES.GCM.Nonce()                       // 12 bytes from the system generator
    /// let given = try AES.GCM.Nonce(data: twelveBytes)   // throws unless exactly 12 bytes
    /// ```
    public struct Nonce: Sendable, Hashable, Sequence {
        var bytes: (UInt32, UInt32, UInt32)

        /// Creates a random nonce from the system's cryptographically secure generator.
        public init() {
            var generator = SystemRandomNumberGenerator()
            self.init(using: &generator)
        }

        /// Creates a random nonce with bytes from `generator`.
        ///
        /// Use a cryptographically secure generator; a seeded one is for reproducible test data only.
        ///
        /// - Parameter generator: The source of the nonce's bytes.
        public init<Generator: RandomNumberGenerator>(using generator: inout Generator) {
            bytes = (0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { $0.fillRandom(using: &generator) }
        }

        /// Creates a nonce from exactly 12 bytes.
        ///
        /// - Parameter data: The nonce bytes.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` unless `data` holds 12 bytes.
        public init<Bytes: Sequence>(data: Bytes) throws(CryptoKitError) where Bytes.Element == UInt8 {
            bytes = (0, 0, 0)
            let valid = withContiguousBytes(of: data) { source -> Bool in
                guard source.count == AES.GCM.nonceByteCount else { return false }
                withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: source) }
                return true
            }
            guard valid else { throw .incorrectParameterSize }
        }

        /// Copies 12 bytes known to be readable at `bytes`.
        init(copying bytes: UnsafeRawPointer) {
            self.bytes = (0, 0, 0)
            Swift.withUnsafeMutableBytes(of: &self.bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 12)) }
        }

        /// Calls `body` with the nonce's 12 bytes.
        ///
        /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
        /// - Returns: Whatever `body` returns.
        /// - Throws: Whatever `body` throws.
        public func withUnsafeBytes<Result, Failure: Error>(
            _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            var copy = bytes
            return try Swift.withUnsafeBytes(of: &copy) { (buffer) throws(Failure) -> Result in try body(buffer) }
        }

        /// An iterator over the bytes, in order.
    public func makeIterator() -> Array<UInt8>.Iterator {
            withUnsafeBytes { Array($0) }.makeIterator()
        }

        public static func == (lhs: Nonce, rhs: Nonce) -> Bool {
            lhs.bytes == rhs.bytes
        }

        public func hash(into hasher: inout Hasher) {
            withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
