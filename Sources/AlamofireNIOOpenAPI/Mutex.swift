import AFSynchronization

/// This module's `Mutex`: Synchronization's, with its locking shown to ThreadSanitizer.
typealias Mutex<Value: ~Copyable> = InstrumentedMutex<Value>
