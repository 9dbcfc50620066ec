import Foundation

// The instruction budget: AlamofireNIO's instructions and allocations per request on W1, W2 and W9,
// counted under callgrind as `--instructions` counts them, against a committed budget. CI fails when
// either rises more than the tolerance above it; the budget file changes only in a commit that says
// why the cost rose (or that it fell).
//
// `bench --budget InstructionBudget.json` checks; `bench --budget InstructionBudget.json --record`
// writes the counts measured now into the file, keeping its tolerance.

/// The committed budget file.
struct InstructionBudget: Codable {
    /// Per workload: the most a request may cost before the tolerance.
    var workloads: [String: InstructionCount]
    /// How far above the budget a count may go, in percent (3).
    var tolerancePercent: Double
    /// Why the budget is what it is: the commit that set it, and what changed.
    var note: String

    static func read(from url: URL) throws -> InstructionBudget {
        try JSONDecoder().decode(InstructionBudget.self, from: Data(contentsOf: url))
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try (encoder.encode(self) + Data("\n".utf8)).write(to: url)
    }
}

/// One workload's count set against its budget.
struct BudgetCheck {
    let workload: String
    let budget: InstructionCount
    let measured: InstructionCount
    let tolerancePercent: Double

    var instructionsChange: Double { percentChange(Double(measured.instructionsPerRequest), Double(budget.instructionsPerRequest)) }
    var allocationsChange: Double { percentChange(measured.allocationsPerRequest, budget.allocationsPerRequest) }
    var isOverBudget: Bool { instructionsChange > tolerancePercent || allocationsChange > tolerancePercent }
    /// Cheaper than the budget by more than the tolerance: the budget could be lowered.
    var isWellUnderBudget: Bool { instructionsChange < -tolerancePercent || allocationsChange < -tolerancePercent }

    private func percentChange(_ value: Double, _ reference: Double) -> Double {
        reference == 0 ? (value == 0 ? 0 : .infinity) : (value - reference) / reference * 100
    }

    var line: String {
        String(
            format: "  %@ %9ld instructions/request (budget %ld, %+.2f%%)  %6.1f allocations/request (budget %.1f, %+.2f%%)  %@",
            workload as NSString, measured.instructionsPerRequest, budget.instructionsPerRequest, instructionsChange,
            measured.allocationsPerRequest, budget.allocationsPerRequest, allocationsChange,
            (isOverBudget ? "OVER BUDGET" : isWellUnderBudget ? "well under budget" : "within budget") as NSString)
    }
}

enum BudgetError: Error, CustomStringConvertible {
    case overBudget([String])

    var description: String {
        switch self {
        case .overBudget(let workloads):
            "over the instruction budget on \(workloads.joined(separator: ", ")): find the rise (bench --profile W1), "
                + "or record a new budget (--record) in a commit that explains it"
        }
    }
}

extension Bench {
    /// Counts AlamofireNIO's requests on each workload the budget names and checks them against it, or
    /// (`record`) writes them into it.
    static func runBudget(path: String, record: Bool) async throws {
        let url = URL(fileURLWithPath: path)
        var budget = try InstructionBudget.read(from: url)
        let ids = budget.workloads.keys.sorted()
        guard !ids.isEmpty, ids.allSatisfy(countedWorkloads.contains) else {
            throw BenchError.usage("a budget names some of \(countedWorkloads.joined(separator: ", "))")
        }
        let server = try await BenchServer.start(quick: true, largeFiles: false, needsDocuments: true)
        let measured: [String: InstructionCount]
        do {
            let callgrind = try Callgrind()
            defer { callgrind.removeProgram() }
            let context = WorkloadContext(
                baseURL: server.baseURL, tlsBaseURL: server.tlsBaseURL, slowURL: server.baseURL, scratch: server.root,
                largeFilePath: "", uploadPath: "", quick: true)
            var counts: [String: InstructionCount] = [:]
            for id in ids { counts[id] = try countInstructions(callgrind, workload: id, client: "AlamofireNIO", context: context) }
            measured = counts
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        print("AlamofireNIO per request (callgrind), against \(path) (tolerance \(budget.tolerancePercent)%):")
        let checks = ids.map { id in
            BudgetCheck(workload: id, budget: budget.workloads[id]!, measured: measured[id]!, tolerancePercent: budget.tolerancePercent)
        }
        for check in checks { print(check.line) }
        if record {
            budget.workloads = measured
            try budget.write(to: url)
            print("recorded in \(path): say why in the commit that changes it, and update its note")
            return
        }
        let over = checks.filter(\.isOverBudget).map(\.workload)
        guard over.isEmpty else { throw BudgetError.overBudget(over) }
    }
}
