import CFuzzingDriver
import Foundation

// `alamofire-fuzz TARGET [libFuzzer's options and corpus directories]`
//
// Built with `-sanitize=fuzzer` (Scripts/fuzz.sh), it fuzzes TARGET with libFuzzer. A plain build
// replays the files and directories it is given through TARGET once: the tests run every committed
// corpus this way, so an input that once crashed a parser keeps being checked.
var arguments = CommandLine.arguments
guard arguments.count >= 2, let target = FuzzTargets.all[arguments[1]] else {
    let names = FuzzTargets.all.keys.sorted().joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: alamofire-fuzz TARGET [options] [corpus…]\ntargets: \(names)\n".utf8))
    exit(2)
}
FuzzTargets.selected = target
arguments.remove(at: 1)

var cArguments = arguments.map { strdup($0) }
cArguments.append(nil)
let status = cArguments.withUnsafeMutableBufferPointer { buffer in
    af_fuzz_main(Int32(arguments.count), buffer.baseAddress) { data, size in
        FuzzTargets.selected?(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
exit(status)
