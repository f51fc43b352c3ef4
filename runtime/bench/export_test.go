package bench

// Backend, CompileSource and ProcessCPU are the package's own helpers, for
// its benchmarks.
var (
	Backend       = backend
	CompileSource = compileSource
	ProcessCPU    = processCPU
)
