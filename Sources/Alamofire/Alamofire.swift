// The `Alamofire` product: AlamofireNIO under Alamofire's module name, so that code written for
// Alamofire compiles on Linux with no change at all: `import Alamofire`, qualified names
// (`Alamofire.Session`, `Alamofire.AFError`), scoped imports (`import enum Alamofire.AFError`) and
// `@_spi(WebSocket) import Alamofire` for the WebSocket requests. Depend on it on Linux and on
// Alamofire itself on Apple platforms (see the CrossPlatform article for the manifest).
@_exported @_spi(WebSocket) public import AlamofireNIO
