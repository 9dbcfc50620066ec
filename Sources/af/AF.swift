// `af`: an HTTPie-style HTTP client on AlamofireNIO (see AFCommand in the AFCommandLine module).
import AFCommandLine
import ArgumentParser

@main
extension AFCommand {}
