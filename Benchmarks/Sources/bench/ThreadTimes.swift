import Foundation

/// Where this process's threads spent a run, per group of threads named alike (`NIO-ELT-0-#3` and
/// `NIO-ELT-0-#5` are one group): on a CPU, waiting for one (runnable, on the run queue) and how
/// often they gave the CPU up (voluntary switches: they went to sleep, waiting for another thread or
/// for the socket) or had it taken. Read from `/proc/self/task/*/schedstat` and `status`; a thread that
/// exits during the run takes its figures with it (Dispatch's idle workers do, after a while).
struct ThreadTimes {
    struct Times {
        var runNanoseconds: Double = 0
        var waitNanoseconds: Double = 0
        var voluntarySwitches: Double = 0
        var involuntarySwitches: Double = 0
        var threads = 0

        /// Adds `other`'s times and switches (not its thread count).
        mutating func add(_ other: Times) {
            runNanoseconds += other.runNanoseconds
            waitNanoseconds += other.waitNanoseconds
            voluntarySwitches += other.voluntarySwitches
            involuntarySwitches += other.involuntarySwitches
        }

        func subtracting(_ earlier: Times) -> Times {
            Times(
                runNanoseconds: runNanoseconds - earlier.runNanoseconds, waitNanoseconds: waitNanoseconds - earlier.waitNanoseconds,
                voluntarySwitches: voluntarySwitches - earlier.voluntarySwitches,
                involuntarySwitches: involuntarySwitches - earlier.involuntarySwitches, threads: threads)
        }
    }

    /// One thread's cumulative figures, keyed by its id in ``Sample``.
    struct Sample {
        var threads: [String: (group: String, times: Times)] = [:]

        /// The figures accumulated since `before`, per group (a thread new since then counts whole).
        func since(_ before: Sample) -> ThreadTimes {
            var result = ThreadTimes()
            for (id, now) in threads {
                let times = before.threads[id].map { now.times.subtracting($0.times) } ?? now.times
                guard times.runNanoseconds > 0 || times.voluntarySwitches > 0 else { continue }
                result.groups[now.group, default: Times()].add(times)
                result.groups[now.group]!.threads += 1
            }
            return result
        }
    }

    var groups: [String: Times] = [:]

    mutating func add(_ other: ThreadTimes) {
        for (group, times) in other.groups {
            groups[group, default: Times()].add(times)
            groups[group]!.threads = max(groups[group]!.threads, times.threads)
        }
    }

    static func sample() -> Sample {
        var sample = Sample()
        let directory = "/proc/self/task"
        for id in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = "\(directory)/\(id)"
            guard let comm = try? String(contentsOfFile: "\(path)/comm", encoding: .utf8),
                let schedstat = try? String(contentsOfFile: "\(path)/schedstat", encoding: .utf8),
                let status = try? String(contentsOfFile: "\(path)/status", encoding: .utf8)
            else { continue }
            let fields = schedstat.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard fields.count >= 2 else { continue }
            func statusValue(_ key: String) -> Double {
                status.split(separator: "\n").first { $0.hasPrefix(key) }.flatMap {
                    Double($0.dropFirst(key.count).trimmingCharacters(in: .whitespaces))
                }
                    ?? 0
            }
            let times = Times(
                runNanoseconds: fields[0], waitNanoseconds: fields[1], voluntarySwitches: statusValue("voluntary_ctxt_switches:"),
                involuntarySwitches: statusValue("nonvoluntary_ctxt_switches:"), threads: 1)
            sample.threads[id] = (group(of: comm.trimmingCharacters(in: .whitespacesAndNewlines)), times)
        }
        return sample
    }

    /// The thread's name without its numbers: `NIO-ELT-0-#3` → `NIO-ELT-#`.
    static func group(of name: String) -> String {
        var group = ""
        for character in name where !character.isNumber {
            if character == "-", group.hasSuffix("-") { continue }
            group.append(character)
        }
        return group
    }

    /// Per request, in µs and switches, each group using more than 1% of the CPU time.
    func printTable(client: String, requests: Int) {
        let total = groups.values.reduce(0) { $0 + $1.runNanoseconds }
        let perRequest = 1 / Double(max(requests, 1))
        print("\(client), per request (\(requests) requests): \(String(format: "%.1f", total * perRequest / 1000)) µs on a CPU in all")
        print("| threads | count | on CPU µs | runnable, waiting µs | sleeps (voluntary switches) | preempted |")
        print("|---|---:|---:|---:|---:|---:|")
        for (group, times) in groups.sorted(by: { $0.value.runNanoseconds > $1.value.runNanoseconds })
        where times.runNanoseconds > total / 100 {
            print(
                String(
                    format: "| %@ | %d | %.1f | %.1f | %.2f | %.2f |", group as NSString, times.threads,
                    times.runNanoseconds * perRequest / 1000, times.waitNanoseconds * perRequest / 1000,
                    times.voluntarySwitches * perRequest, times.involuntarySwitches * perRequest))
        }
        print()
    }
}
