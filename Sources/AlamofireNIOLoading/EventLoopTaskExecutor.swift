import NIOCore

/// A `TaskExecutor` that runs a task's jobs on one NIO event loop: a task preferring it resumes
/// there when the loop produces what it awaits, with no crossing to the concurrency pool and back.
///
/// A job is enqueued with `execute`, so a job enqueued from the loop itself runs in the same tick,
/// after the I/O that woke it. The loop must outlive the task: a loop already shut down drops the
/// job (NIO reports it), as it drops any task it is given then, and the task never resumes. Shutting
/// down a session's own event loop group while its streams run is not supported (see `Session`'s
/// `eventLoopGroup`). `TrustCheckExecutor` does the same over a Dispatch queue.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
