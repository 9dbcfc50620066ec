/// Facts about this build of AlamofireNIO.
public enum AFInfo {
    /// The library's version, as it appears in the default `User-Agent`.
    public static let version = "0.1.0"
}
