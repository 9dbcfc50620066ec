import CFuzzingDriver
import Foundation

// `alamofire-fuzz TARGET [libFuzzer's options and corpus directories]`
//
// Built with `-sanitize=fuzzer` (Scripts/fuzz.sh), it fuzzes TARGET with libFuzzer. A plain build
// replays the files and directories it is given through TARGET once: the tests run every committed
// corpus this way, so an input that once crashed a parser keeps being checked.
//
// libFuzzer's `-merge=1` and `-fork=N` run this program again with its options but without TARGET,
// so the target chosen is also put in ALAMOFIRE_FUZZ_TARGET, which those runs inherit and read.
let targetVariable = "ALAMOFIRE_FUZZ_TARGET"
var arguments = CommandLine.arguments
let targetName: String?
if arguments.count >= 2, FuzzTargets.all[arguments[1]] != nil {
    targetName = arguments.remove(at: 1)
} else {
    targetName = ProcessInfo.processInfo.environment[targetVariable]
}
guard let targetName, let target = FuzzTargets.all[targetName] else {
    let names = FuzzTargets.all.keys.sorted().joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: alamofire-fuzz TARGET [options] [corpus…]\ntargets: \(names)\n".utf8))
    exit(2)
}
FuzzTargets.selected = target
setenv(targetVariable, targetName, 1)

var cArguments = arguments.map { strdup($0) }
cArguments.append(nil)
let status = cArguments.withUnsafeMutableBufferPointer { buffer in
    af_fuzz_main(Int32(arguments.count), buffer.baseAddress) { data, size in
        FuzzTargets.selected?(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
exit(status)
