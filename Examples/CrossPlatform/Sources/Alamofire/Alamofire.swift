// Linux only (see Package.swift): presents AlamofireNIO as the module `Alamofire`, so code written for
// Alamofire (`import Alamofire`, `Alamofire.Session`) compiles unchanged.
@_exported import AlamofireNIO
