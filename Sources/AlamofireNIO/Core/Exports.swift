// What `import AlamofireNIO` brings with it: the metrics types, which live with the loading layer
// that gathers them (its other declarations are the package's own).
@_exported public import AlamofireNIOLoading
